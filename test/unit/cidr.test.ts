import { BlockList } from 'node:net';
import { expect } from 'chai';
import fc from 'fast-check';
import { CidrSet } from '../../src/policies/conditions.js';

const octet = fc.integer({ min: 0, max: 255 });
const ipv4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));

describe('$cidr blocks', () => {
  it('answers as Node’s BlockList does for IPv4 blocks and addresses', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(ipv4, fc.integer({ min: 0, max: 32 })), { minLength: 1, maxLength: 4 }),
        fc.array(ipv4, { minLength: 1, maxLength: 20 }),
        (blocks, addresses) => {
          const set = CidrSet.of(blocks.map(([a, p]) => `${a}/${p}`))!;
          const reference = new BlockList();
          for (const [a, p] of blocks) reference.addSubnet(a, p, 'ipv4');
          for (const address of addresses) {
            expect(set.test(address), `${address} in ${JSON.stringify(blocks)}`).to.equal(
              reference.check(address, 'ipv4') ? 'true' : 'false',
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('mixes IPv4 and IPv6 blocks, and calls text that is no address unknown', () => {
    const set = CidrSet.of(['10.0.0.0/8', '2001:db8::/32'])!;
    expect(set.test('10.255.0.1')).to.equal('true');
    expect(set.test('11.0.0.1')).to.equal('false');
    expect(set.test('2001:db8::7')).to.equal('true');
    expect(set.test('2001:db9::7')).to.equal('false');
    expect(set.test('not an address')).to.equal('unknown');
    expect(CidrSet.of(['10.0.0.0/8'])!.test('010.0.0.1')).to.equal('unknown');
    expect(CidrSet.of(['10.0.0.0/33'])).to.equal(undefined);
  });
});
