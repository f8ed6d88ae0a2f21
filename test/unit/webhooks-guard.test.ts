import { expect } from 'chai';
import fc from 'fast-check';
import {
  addressAllowed,
  blockedRange,
  checkWebhookUrl,
  MAX_WEBHOOK_URL_LENGTH,
} from '../../src/webhooks/address-guard.js';

const octet = fc.integer({ min: 0, max: 255 });
const ipv4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));

const hex = (n: number): string => n.toString(16);
const octetsOf = (ip: string): number[] => ip.split('.').map(Number);

/** The IPv6 spellings that carry an IPv4 address, and must be judged as that address. */
function embeddings(ip: string): string[] {
  const [a, b, c, d] = octetsOf(ip) as [number, number, number, number];
  const high = hex((a << 8) | b);
  const low = hex((c << 8) | d);
  return [
    `::ffff:${ip}`,
    `::FFFF:${ip}`,
    `0:0:0:0:0:ffff:${ip}`,
    `::ffff:${high}:${low}`,
    `0000:0000:0000:0000:0000:ffff:${high.padStart(4, '0')}:${low.padStart(4, '0')}`,
    `64:ff9b::${ip}`,
    `64:ff9b::${high}:${low}`,
    `2002:${high}:${low}::1`,
  ];
}

/** Addresses of a block: `base` with its last `bits` bits random. */
function inBlock(base: string, prefix: number): fc.Arbitrary<string> {
  const [a, b, c, d] = octetsOf(base) as [number, number, number, number];
  const network = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
  const size = 2 ** (32 - prefix);
  return fc
    .integer({ min: 0, max: size - 1 })
    .map((offset) => network + offset)
    .map((n) => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.'));
}

const insecure = { allowInsecure: true };
const strict = { allowInsecure: false };

describe('webhook address guard', () => {
  describe('blockedRange', () => {
    it('names the blocked IPv4 ranges', () => {
      const cases: [string, string][] = [
        ['127.0.0.1', 'loopback'],
        ['127.255.255.254', 'loopback'],
        ['0.0.0.0', 'unspecified'],
        ['0.1.2.3', 'unspecified'],
        ['10.0.0.1', 'private'],
        ['172.16.0.1', 'private'],
        ['172.31.255.255', 'private'],
        ['192.168.1.1', 'private'],
        ['169.254.0.1', 'link-local'],
        ['169.254.169.254', 'metadata'],
        ['100.100.100.200', 'metadata'],
        ['100.64.0.1', 'cgnat'],
        ['100.127.255.255', 'cgnat'],
        ['224.0.0.1', 'multicast'],
        ['239.255.255.250', 'multicast'],
        ['240.0.0.1', 'reserved'],
        ['255.255.255.255', 'broadcast'],
        ['198.18.0.1', 'benchmarking'],
        ['198.19.255.255', 'benchmarking'],
        ['192.0.0.8', 'ietf-protocol'],
        ['192.0.2.1', 'documentation'],
        ['198.51.100.7', 'documentation'],
        ['203.0.113.9', 'documentation'],
      ];
      for (const [ip, range] of cases) expect(blockedRange(ip), ip).to.equal(range);
    });

    it('names the blocked IPv6 ranges', () => {
      const cases: [string, string][] = [
        ['::1', 'loopback'],
        ['0:0:0:0:0:0:0:1', 'loopback'],
        ['::', 'unspecified'],
        ['fc00::1', 'private'],
        ['fd12:3456::1', 'private'],
        ['fe80::1', 'link-local'],
        ['fe80::1%eth0', 'link-local'],
        ['febf::1', 'link-local'],
        ['ff02::1', 'multicast'],
        ['fd00:ec2::254', 'metadata'],
        ['2001::1', 'teredo'],
        ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
        ['2001:2::1', 'reserved'],
        ['2001:db8::1', 'documentation'],
        ['100::1', 'reserved'],
        ['::8.8.8.8', 'reserved'],
        ['::ffff:0:8.8.8.8', 'reserved'],
        ['64:ff9b:1::a00:1', 'reserved'],
        ['4000::1', 'reserved'],
      ];
      for (const [ip, range] of cases) expect(blockedRange(ip), ip).to.equal(range);
    });

    it('lets public addresses through, embedded ones included', () => {
      for (const ip of [
        '8.8.8.8',
        '1.1.1.1',
        '93.184.216.34',
        '172.32.0.1',
        '100.128.0.1',
        '169.255.0.1',
        '198.20.0.1',
        '223.255.255.255',
        '2606:4700:4700::1111',
        '2001:4860:4860::8888',
        '2a00:1450:4001::200e',
        '::ffff:8.8.8.8',
        '::ffff:808:808',
        '64:ff9b::8.8.8.8',
        '2002:808:808::1',
      ]) {
        expect(blockedRange(ip), ip).to.equal(null);
      }
    });

    it('calls anything that is not an address invalid', () => {
      for (const text of [
        '',
        'abc',
        'localhost',
        '010.0.0.1',
        '1.2.3',
        '256.0.0.1',
        '[::1]',
        '::ffff:999.0.0.1',
      ])
        expect(blockedRange(text), text).to.equal('invalid');
    });

    for (const [base, prefix, range] of [
      ['10.0.0.0', 8, 'private'],
      ['172.16.0.0', 12, 'private'],
      ['192.168.0.0', 16, 'private'],
      ['127.0.0.0', 8, 'loopback'],
      ['100.64.0.0', 10, 'cgnat'],
    ] as const) {
      it(`blocks every address of ${base}/${prefix}, in every IPv6 spelling too`, () => {
        fc.assert(
          fc.property(inBlock(base, prefix), (ip) => {
            expect(blockedRange(ip), ip).to.equal(range);
            for (const form of embeddings(ip)) expect(blockedRange(form), form).to.equal(range);
          }),
          { numRuns: 300 },
        );
      });
    }

    it('judges an embedded IPv4 address exactly as the address itself', () => {
      fc.assert(
        fc.property(ipv4, (ip) => {
          const range = blockedRange(ip);
          for (const form of embeddings(ip)) expect(blockedRange(form), form).to.equal(range);
        }),
        { numRuns: 1000 },
      );
    });

    it('blocks every link-local address, 169.254.169.254 as metadata', () => {
      fc.assert(
        fc.property(inBlock('169.254.0.0', 16), (ip) => {
          const expected = ip === '169.254.169.254' ? 'metadata' : 'link-local';
          expect(blockedRange(ip)).to.equal(expected);
          expect(blockedRange(`::ffff:${ip}`)).to.equal(expected);
        }),
        { numRuns: 300 },
      );
    });
  });

  describe('addressAllowed', () => {
    it('allows loopback only when insecure URLs are allowed, and nothing else besides', () => {
      for (const ip of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1']) {
        expect(addressAllowed(ip, strict), ip).to.equal('loopback');
        expect(addressAllowed(ip, insecure), ip).to.equal(null);
      }
      for (const ip of ['0.0.0.0', '::', '10.0.0.1', '169.254.169.254', 'fd00:ec2::254', 'not-an-ip']) {
        expect(addressAllowed(ip, insecure), ip).to.not.equal(null);
        expect(addressAllowed(ip, insecure), ip).to.equal(addressAllowed(ip, strict));
      }
      expect(addressAllowed('8.8.8.8', strict)).to.equal(null);
    });
  });

  describe('checkWebhookUrl', () => {
    const problem = (raw: string, policy = strict): string | undefined => {
      const checked = checkWebhookUrl(raw, policy);
      return 'problem' in checked ? checked.problem : undefined;
    };

    it('accepts https URLs of public names and addresses', () => {
      for (const raw of [
        'https://hooks.example.com/in',
        'https://hooks.example.com:8443/in?tenant=a&b=%23',
        'https://8.8.8.8/hook',
        'https://[2606:4700:4700::1111]/hook',
      ]) {
        const checked = checkWebhookUrl(raw, strict);
        expect(checked, raw).to.have.property('url').that.is.instanceOf(URL);
      }
    });

    it('refuses what is not an https URL', () => {
      expect(problem('not a url')).to.equal('url is not a valid URL');
      expect(problem('/relative/path')).to.equal('url is not a valid URL');
      expect(problem('http://hooks.example.com/')).to.equal('url must use https');
      expect(problem('ftp://hooks.example.com/')).to.equal('url must use https');
      expect(problem('ftp://hooks.example.com/', insecure)).to.equal('url must use https');
      expect(problem('file:///etc/passwd', insecure)).to.equal('url must use https');
      expect(problem('http://hooks.example.com/', insecure)).to.equal(undefined);
    });

    it('refuses credentials and fragments', () => {
      expect(problem('https://user:pass@hooks.example.com/')).to.equal('url must not contain credentials');
      expect(problem('https://user@hooks.example.com/')).to.equal('url must not contain credentials');
      expect(problem('https://hooks.example.com/#top')).to.equal('url must not contain a fragment');
      expect(problem('https://hooks.example.com/#')).to.equal('url must not contain a fragment');
    });

    it('refuses URLs longer than 2048 characters', () => {
      const base = 'https://hooks.example.com/';
      expect(problem(base + 'a'.repeat(MAX_WEBHOOK_URL_LENGTH - base.length))).to.equal(undefined);
      expect(problem(base + 'a'.repeat(MAX_WEBHOOK_URL_LENGTH - base.length + 1))).to.match(/2048/);
    });

    it('refuses literal addresses in blocked ranges, however they are spelt', () => {
      const cases: [string, RegExp][] = [
        ['https://10.0.0.1/', /^url points to a private address \(10\.0\.0\.1\)$/],
        ['https://127.0.0.1:8443/', /loopback address \(127\.0\.0\.1\)/],
        ['https://2130706433/', /loopback address \(127\.0\.0\.1\)/],
        ['https://0x7f.1/', /loopback address \(127\.0\.0\.1\)/],
        ['https://0177.0.0.1/', /loopback address \(127\.0\.0\.1\)/],
        ['https://127.1/', /loopback address \(127\.0\.0\.1\)/],
        ['https://127.0.0.1./', /loopback/],
        ['https://0xa000001/', /private address \(10\.0\.0\.1\)/],
        ['https://[::1]/', /loopback address \(::1\)/],
        ['https://[::ffff:127.0.0.1]/', /loopback/],
        ['https://[::ffff:10.0.0.1]/', /private/],
        ['https://[64:ff9b::192.168.0.1]/', /private/],
        ['https://[fe80::1]/', /link-local/],
        ['https://[fd00:ec2::254]/latest/meta-data/', /metadata/],
        ['https://169.254.169.254/latest/meta-data/', /metadata/],
        ['https://100.100.100.200/', /metadata/],
        ['https://0.0.0.0/', /unspecified/],
        ['https://100.64.1.1/', /cgnat/],
        ['https://224.0.0.251/', /multicast/],
        ['https://[2001::1]/', /teredo/],
      ];
      for (const [raw, expected] of cases) expect(problem(raw), raw).to.match(expected);
    });

    it('refuses localhost names unless insecure URLs are allowed', () => {
      for (const raw of [
        'https://localhost/',
        'https://LOCALHOST:8443/',
        'https://localhost./',
        'https://api.localhost/',
      ]) {
        expect(problem(raw), raw).to.match(/loopback/);
        expect(problem(raw, insecure), raw).to.equal(undefined);
      }
      expect(problem('https://localhost.example.com/')).to.equal(undefined);
    });

    it('with insecure URLs allowed, lets plain http and loopback through, and nothing else', () => {
      expect(problem('http://127.0.0.1:8080/hook', insecure)).to.equal(undefined);
      expect(problem('http://[::1]:8080/hook', insecure)).to.equal(undefined);
      expect(problem('http://localhost:3000/hook', insecure)).to.equal(undefined);
      for (const raw of [
        'http://10.1.2.3/',
        'http://192.168.0.10/',
        'http://169.254.169.254/',
        'http://0.0.0.0/',
        'http://[fc00::1]/',
      ]) {
        expect(problem(raw, insecure), raw).to.match(/^url points to an? [a-z-]+ address/);
      }
    });

    it('refuses every literal address of a private range', () => {
      fc.assert(
        fc.property(
          fc.oneof(inBlock('10.0.0.0', 8), inBlock('172.16.0.0', 12), inBlock('192.168.0.0', 16)),
          (ip) => {
            expect(problem(`https://${ip}/`, insecure)).to.match(/private/);
            expect(problem(`https://[::ffff:${ip}]/`, insecure)).to.match(/private/);
          },
        ),
        { numRuns: 200 },
      );
    });
  });
});
