import { expect } from 'chai';
import fc from 'fast-check';
import { RISK_READS, type RiskInput } from '../../src/principals/model.js';
import { assessRisk } from '../../src/risk/score.js';

/** What a risk updater reads of a principal (src/principals/repository.ts `lockRiskInputs`). */
function narrowed(p: RiskInput): RiskInput {
  const keep = <T>(from: Record<string, T>, keys: readonly string[]): Record<string, T> =>
    Object.fromEntries(keys.filter((k) => k in from).map((k) => [k, from[k]!]));
  return {
    ...p,
    attributes: keep(p.attributes, RISK_READS.attributes),
    metadata: keep(p.metadata, RISK_READS.metadata),
  };
}

/** An object that notes every key read of it. */
function watched<T extends object>(value: T, read: Set<string>): T {
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key === 'string') read.add(key);
      return Reflect.get(target, key, receiver) as unknown;
    },
    has(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.has(target, key);
    },
  });
}

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T00:00:00Z');

const principal: fc.Arbitrary<RiskInput> = fc.record({
  type: fc.constantFrom('USER', 'SERVICE_ACCOUNT', 'AI_AGENT', 'API_KEY'),
  status: fc.constantFrom('active', 'suspended', 'deprovisioned'),
  last_login: fc.option(
    fc.integer({ min: 0, max: 400 }).map((days) => new Date(NOW - days * DAY).toISOString()),
  ),
  attributes: fc.dictionary(
    fc.constantFrom('allowed_tools', 'capabilities', 'team', 'role', 'department', 'scope'),
    fc.oneof(
      fc.constantFrom('*', 'shell', 'read', 'payments'),
      fc.array(fc.constantFrom('*', 'search', 'shell', 'Admin', 'data_export', 'read'), { maxLength: 25 }),
    ),
  ),
  metadata: fc.dictionary(fc.constantFrom('owner', 'team', 'ticket'), fc.constantFrom('', 'prn_x', 'ops')),
  privilege_factors: fc.constantFrom([], [{ code: 'PRIVILEGED_ACCESS' as const, points: 30 }]),
  owner_state: fc.constantFrom(null, 'deleted', 'deprovisioned'),
  delegation_state: fc.constantFrom(null, 'acting', 'orphaned'),
});

describe('the risk score', () => {
  it('reads no attribute or metadata key beyond RISK_READS, what the risk updaters read', () => {
    fc.assert(
      fc.property(principal, (p) => {
        const attributes = new Set<string>();
        const metadata = new Set<string>();
        assessRisk(
          { ...p, attributes: watched(p.attributes, attributes), metadata: watched(p.metadata, metadata) },
          NOW,
        );
        expect(
          [...attributes].filter((k) => !(RISK_READS.attributes as readonly string[]).includes(k)),
        ).to.deep.equal([]);
        expect(
          [...metadata].filter((k) => !(RISK_READS.metadata as readonly string[]).includes(k)),
        ).to.deep.equal([]);
      }),
    );
  });

  it('scores a principal read narrowly as it scores the whole principal', () => {
    fc.assert(
      fc.property(principal, (p) => {
        expect(assessRisk(narrowed(p), NOW)).to.deep.equal(assessRisk(p, NOW));
      }),
    );
  });
});
