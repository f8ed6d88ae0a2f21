import { expect } from 'chai';
import { decide } from '../../src/decisions/engine.js';
import type { PolicyIndex } from '../../src/decisions/policy-index.js';
import {
  buildIndex,
  expectedReasons,
  loadEngineSuites,
  requestOf,
  shownReason,
} from '../helpers/engine-cases.js';

/**
 * The decision engine (`decide` over a `PolicyIndex`) on its own, without HTTP or Neo4j: each
 * rule of docs/policies.md (policies and decisions) is a file of test/cases/engine — a world
 * (principals, nested groups, registered resources, policies, delegations) and requests with the
 * decision and the exact reasons expected (the format: test/cases/engine/README.md) — and this
 * loop builds each world's index and decides each case. Every policy is checked as the API checks
 * it at write time, so no case rests on a policy the service would refuse.
 *
 * Cases where the engine does not (yet) do what the contract says keep the contract's answer
 * and are skipped, with the reason in the case.
 */

const NOW = Date.now();

for (const suite of loadEngineSuites(NOW)) {
  describe(`decision engine: ${suite.rule}`, () => {
    let index: PolicyIndex;
    const versions = new Map(suite.world.policies.map((p) => [p.id, p.version ?? 1]));

    before(() => {
      index = buildIndex(suite.world, NOW);
    });

    for (const c of suite.cases) {
      const title = c.skip ? `${c.name} (skipped: ${c.skip})` : c.name;
      (c.skip ? it.skip : it)(title, () => {
        const request = requestOf(c);
        const verdict = decide(index, request);
        const got = verdict.reasons.map(shownReason);
        const label = `${suite.file}: ${c.resource} as ${c.principal}: ${JSON.stringify(verdict.reasons)}`;

        expect(verdict.allowed, label).to.equal(c.allowed);
        // The reasons expected, or the alternative they match if one does (compared as lists so
        // that a failure shows the difference).
        expect([...got].sort(), label).to.deep.equal(expectedReasons(c, got));
        for (const r of verdict.reasons) {
          if (r.policy_id !== undefined) expect(r.policy_version, label).to.equal(versions.get(r.policy_id));
        }
        const granted = verdict.allowed
          ? [
              ...new Set(verdict.reasons.flatMap((r) => (r.policy_id === undefined ? [] : [r.policy_id]))),
            ].sort()
          : [];
        expect(verdict.grantedBy, label).to.deep.equal(granted);

        // Asking for the trace changes nothing about the answer.
        const explained = decide(index, request, { explain: true });
        expect(explained.trace, label).to.not.equal(undefined);
        expect({ ...explained, trace: undefined }, label).to.deep.equal({ ...verdict, trace: undefined });
      });
    }
  });
}
