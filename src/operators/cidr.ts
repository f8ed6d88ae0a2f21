import { BlockList, isIP } from 'node:net';

/** A three-valued outcome: true, false, or unknown when the values cannot be compared. */
export type Tri = 'true' | 'false' | 'unknown';

/** A CIDR block (`10.0.0.0/8`, `2001:db8::/32`) as address, prefix length and family. */
export function parseCidr(
  text: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  const version = isIP(address);
  if (version === 0 || !/^\d{1,3}$/.test(bits)) return undefined;
  const prefix = Number(bits);
  if (prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;

function ipv4Number(text: string): number | undefined {
  if (!IPV4.test(text)) return undefined;
  let n = 0;
  for (const part of text.split('.')) n = n * 256 + Number(part);
  return n;
}

type Cidr = NonNullable<ReturnType<typeof parseCidr>>;

/**
 * Blocks of addresses a `$cidr` names: IPv4-only lists are tested with integer masks (the common
 * case, and a decision's hot path); anything else through Node's BlockList.
 */
export class CidrSet {
  private readonly v4: { network: number; mask: number }[] | undefined;

  private constructor(
    private readonly list: BlockList,
    cidrs: readonly Cidr[],
  ) {
    if (cidrs.every((c) => c.family === 'ipv4')) {
      this.v4 = cidrs.map((c) => {
        const mask = c.prefix === 0 ? 0 : (0xffffffff << (32 - c.prefix)) >>> 0;
        return { network: (ipv4Number(c.address)! & mask) >>> 0, mask };
      });
    }
  }

  static of(texts: readonly string[]): CidrSet | undefined {
    const cidrs: Cidr[] = [];
    for (const text of texts) {
      const cidr = parseCidr(text);
      if (!cidr) return undefined;
      cidrs.push(cidr);
    }
    const list = new BlockList();
    for (const c of cidrs) list.addSubnet(c.address, c.prefix, c.family);
    return new CidrSet(list, cidrs);
  }

  /** Whether an address is in one of the blocks; unknown for text that is no address. */
  test(address: string): Tri {
    if (this.v4) {
      const n = ipv4Number(address);
      if (n !== undefined) {
        for (const { network, mask } of this.v4) if ((n & mask) >>> 0 === network) return 'true';
        return 'false';
      }
    }
    const version = isIP(address);
    if (version === 0) return 'unknown';
    return this.list.check(address, version === 4 ? 'ipv4' : 'ipv6') ? 'true' : 'false';
  }
}
