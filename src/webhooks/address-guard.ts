import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may not go (docs/api.md §8): a customer-supplied URL must not become a way to reach
 * the service's own network. Addresses are classified here, once when a URL is registered (for
 * literal addresses) and again for every address actually connected to (see transport.ts), so
 * that a name re-pointed after registration (DNS rebinding) is caught too.
 */

/** A range name, and the blocks it covers, most specific first: the first match names it. */
const V4_RANGES: readonly (readonly [string, readonly string[]])[] = [
  ['metadata', ['169.254.169.254/32', '100.100.100.200/32']],
  ['broadcast', ['255.255.255.255/32']],
  ['unspecified', ['0.0.0.0/8']],
  ['loopback', ['127.0.0.0/8']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['link-local', ['169.254.0.0/16']],
  ['cgnat', ['100.64.0.0/10']],
  ['ietf-protocol', ['192.0.0.0/24']],
  ['documentation', ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24']],
  ['benchmarking', ['198.18.0.0/15']],
  // The deprecated 6to4 relay anycast: nothing a customer endpoint lives behind.
  ['reserved', ['192.88.99.0/24', '240.0.0.0/4']],
  ['multicast', ['224.0.0.0/4']],
];

/**
 * IPv6 blocks with a name of their own. The IPv4-carrying forms (mapped, compatible, NAT64,
 * 6to4) are unwrapped before these are consulted, and whatever lies outside global unicast
 * (2000::/3) is refused afterwards anyway; these only give the refusal a better name.
 */
const V6_RANGES: readonly (readonly [string, readonly string[]])[] = [
  ['metadata', ['fd00:ec2::254/128']],
  ['private', ['fc00::/7']],
  ['link-local', ['fe80::/10']],
  ['site-local', ['fec0::/10']],
  ['multicast', ['ff00::/8']],
  ['teredo', ['2001::/32']],
  // IETF protocol assignments (benchmarking, ORCHID, AMT…), the discard prefix and local-use
  // NAT64, whose embedded IPv4 sits where the well-known prefix's does not.
  ['reserved', ['2001::/23', '100::/64', '64:ff9b:1::/48']],
  ['documentation', ['2001:db8::/32', '3fff::/20']],
];

function blockLists(
  ranges: readonly (readonly [string, readonly string[]])[],
  family: 'ipv4' | 'ipv6',
): [string, BlockList][] {
  return ranges.map(([name, cidrs]) => {
    const list = new BlockList();
    for (const cidr of cidrs) {
      const [address, prefix] = cidr.split('/');
      list.addSubnet(address!, Number(prefix), family);
    }
    return [name, list];
  });
}

const V4_LISTS = blockLists(V4_RANGES, 'ipv4');
const V6_LISTS = blockLists(V6_RANGES, 'ipv6');

function firstMatch(
  lists: readonly [string, BlockList][],
  ip: string,
  family: 'ipv4' | 'ipv6',
): string | null {
  for (const [name, list] of lists) if (list.check(ip, family)) return name;
  return null;
}

/** The eight 16-bit groups of an address `isIP` accepted as IPv6 (zone already removed). */
function ipv6Groups(ip: string): number[] {
  let text = ip;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    const [a, b, c, d] = text
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    const hex = (n: number): string => n.toString(16);
    text = `${text.slice(0, lastColon + 1)}${hex((a! << 8) | b!)}:${hex((c! << 8) | d!)}`;
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const gap = text.indexOf('::');
  if (gap < 0) return parse(text);
  const head = parse(text.slice(0, gap));
  const rest = parse(text.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
}

const ipv4Of = (high: number, low: number): string =>
  [high >>> 8, high & 0xff, low >>> 8, low & 0xff].join('.');

function classifyV4(ip: string): string | null {
  return firstMatch(V4_LISTS, ip, 'ipv4');
}

function classifyV6(ip: string): string | null {
  const g = ipv6Groups(ip);
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);
  const embedded = ipv4Of(g[6]!, g[7]!);
  // ::ffff:a.b.c.d reaches a.b.c.d itself on a dual-stack host.
  if (zeros(0, 5) && g[5] === 0xffff) return classifyV4(embedded);
  if (zeros(0, 6)) {
    if (g[6] === 0 && g[7] === 0) return 'unspecified';
    if (g[6] === 0 && g[7] === 1) return 'loopback';
    // IPv4-compatible addresses are deprecated: a public one is still nowhere to deliver to.
    return classifyV4(embedded) ?? 'reserved';
  }
  // NAT64 and 6to4 hand the embedded IPv4 to a translator or relay, which may well sit inside.
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return classifyV4(embedded);
  if (g[0] === 0x2002) return classifyV4(ipv4Of(g[1]!, g[2]!));
  const canonical = g.map((x) => x.toString(16)).join(':');
  const named = firstMatch(V6_LISTS, canonical, 'ipv6');
  if (named) return named;
  return (g[0]! & 0xe000) === 0x2000 ? null : 'reserved';
}

/**
 * Null for an address webhooks may reach, else the name of the range that forbids it
 * (`loopback`, `private`, `link-local`, `metadata`, …); `invalid` for text that is no address.
 */
export function blockedRange(ip: string): string | null {
  const zone = ip.indexOf('%');
  const address = zone < 0 ? ip : ip.slice(0, zone);
  const version = isIP(address);
  if (version === 4) return classifyV4(address);
  if (version === 6) return classifyV6(address);
  return 'invalid';
}

export interface AddressPolicy {
  /** Development and tests: plain http and loopback addresses; nothing else is relaxed. */
  allowInsecure: boolean;
}

/** Null when the address may be connected to, else the range that forbids it. */
export function addressAllowed(ip: string, policy: AddressPolicy): string | null {
  const range = blockedRange(ip);
  if (range === 'loopback' && policy.allowInsecure) return null;
  return range;
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

const article = (word: string): string => (/^[aeiou]/.test(word) ? 'an' : 'a');

/**
 * The registration-time check of a webhook URL. Names are resolved only when delivering (and
 * checked then), but a literal address is refused here already, in whatever spelling the URL
 * parser accepts (`2130706433`, `0x7f.1`, `[::ffff:7f00:1]`): `url.hostname` is its normal form.
 */
export function checkWebhookUrl(raw: string, policy: AddressPolicy): { url: URL } | { problem: string } {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH)
    return { problem: `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'url is not a valid URL' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowInsecure))
    return { problem: 'url must use https' };
  if (url.username !== '' || url.password !== '') return { problem: 'url must not contain credentials' };
  // An empty fragment (`…/#`) leaves `hash` empty but still shows in the serialisation.
  if (url.href.includes('#')) return { problem: 'url must not contain a fragment' };

  let host = url.hostname;
  if (host.startsWith('[')) host = host.slice(1, -1);
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if ((name === 'localhost' || name.endsWith('.localhost')) && !policy.allowInsecure)
    return { problem: `url points to a loopback address (${host})` };
  if (isIP(host) !== 0) {
    const range = addressAllowed(host, policy);
    if (range !== null) return { problem: `url points to ${article(range)} ${range} address (${host})` };
  }
  return { url };
}
