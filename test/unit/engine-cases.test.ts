import { expect } from 'chai';
import { caseFile } from '../helpers/cases.js';
import {
  engineSuite,
  resolveTime,
  suiteFileSchema,
  type SuiteFile,
  type WorldFile,
} from '../helpers/engine-cases.js';

/**
 * The format of test/cases/engine: what a file may say, and the cases it stands for once loaded.
 * A file that says something the format does not know must fail the load, never pass unread.
 */

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

const WORLDS = new Map<string, WorldFile>([
  [
    'tiny',
    {
      principals: [{ id: 'prn_a', type: 'USER', name: 'A' }],
      policies: [{ id: 'pol_shared', effect: 'allow', principals: ['prn_a'], resources: ['doc:shared'] }],
    },
  ],
]);

const load = (source: string) => {
  const { file, content } = caseFile<SuiteFile>('x.yaml', source, suiteFileSchema);
  return engineSuite(file, content, WORLDS, NOW);
};

const POLICIES = `
policies:
  - { id: pol_eq, effect: allow, principals: [prn_a], resources: ['op:eq'], conditions: { context.v: x } }
  - { id: pol_base, effect: allow, principals: [prn_a], resources: ['tri:*'] }
  - { id: pol_no, effect: deny, principals: [prn_a], resources: ['tri:gt'], conditions: { context.n: { $gt: 1 } } }
  - { id: pol_glob, effect: allow, principals: [prn_a], resources: ['db:pay-*'] }
  - { id: pol_repo, effect: allow, principals: [prn_a], actions: ['repo:*'], resources: ['act:repo'] }
`;

const one = `
  - name: one
    principal: prn_a
    resource: doc:shared
    allowed: true
    reasons: [POLICY_ALLOW pol_shared]`;

describe('engine case files', () => {
  it('refuses a misspelt key of a case, of a table and of a policy, naming it', () => {
    expect(() =>
      load(
        `rule: r\ncases:\n  - { name: n, principal: prn_a, resource: 'doc:a', alowed: true, reasons: [X] }`,
      ),
    ).to.throw(/x\.yaml does not fit its schema: .*'alowed'/);
    expect(() =>
      load(`rule: r\nworld: tiny\n${POLICIES}\ncases:
  - { table: context, principal: prn_a, resource: 'op:eq', policy: pol_eq, yess: [{ v: x }] }`),
    ).to.throw(/'yess'/);
    expect(() =>
      load(
        `rule: r\npolicies:\n  - { id: p, effect: allow, resources: ['doc:a'], condition: {} }\ncases:${one}`,
      ),
    ).to.throw(/'condition'/);
    // A case missing what it expects is no case either.
    expect(() =>
      load(`rule: r\ncases:\n  - { name: n, principal: prn_a, resource: 'doc:a', allowed: true }`),
    ).to.throw(/required property 'reasons'/);
  });

  it('adds the file’s world to the shared one it names, and refuses a world that does not exist', () => {
    const suite = load(`rule: r\nworld: tiny\n${POLICIES}\ncases:${one}`);
    expect(suite.world.principals.map((p) => p.id)).to.deep.equal(['prn_a']);
    expect(suite.world.policies.map((p) => p.id)).to.deep.equal([
      'pol_shared',
      'pol_eq',
      'pol_base',
      'pol_no',
      'pol_glob',
      'pol_repo',
    ]);
    expect(() => load(`rule: r\nworld: huge\ncases:${one}`)).to.throw(/no world 'huge'/);
  });

  it('refuses an id defined twice, a case name given twice, and a table of a policy not in the world', () => {
    expect(() =>
      load(`rule: r\nworld: tiny\nprincipals: [{ id: prn_a, type: USER, name: Again }]\ncases:${one}`),
    ).to.throw(/principal 'prn_a' is defined twice/);
    expect(() => load(`rule: r\nworld: tiny\ncases:${one}${one}`)).to.throw(
      /case name 'one' is defined twice/,
    );
    expect(() =>
      load(
        `rule: r\nworld: tiny\ncases:\n  - { table: action, principal: prn_a, resource: 'a:b', policy: pol_x, yes: [read] }`,
      ),
    ).to.throw(/policy 'pol_x'/);
  });

  it('resolves times relative to now in days, hours and minutes, and leaves RFC 3339 as written', () => {
    expect(resolveTime('now', NOW)).to.equal('2026-03-01T12:00:00.000Z');
    expect(resolveTime('now+30d', NOW)).to.equal('2026-03-31T12:00:00.000Z');
    expect(resolveTime('now-1d', NOW)).to.equal('2026-02-28T12:00:00.000Z');
    expect(resolveTime('now+2h', NOW)).to.equal('2026-03-01T14:00:00.000Z');
    expect(resolveTime('now-5m', NOW)).to.equal('2026-03-01T11:55:00.000Z');
    expect(resolveTime('2026-01-01T00:00:00Z', NOW)).to.equal('2026-01-01T00:00:00Z');
    const suite = load(`rule: r\nworld: tiny
policies: [{ id: p, effect: allow, principals: [prn_a], resources: ['doc:a'], valid_from: now-1d, valid_until: now+1h }]
cases:${one}`);
    expect(suite.world.policies.find((p) => p.id === 'p')).to.include({
      valid_from: '2026-02-28T12:00:00.000Z',
      valid_until: '2026-03-01T13:00:00.000Z',
    });
    expect(() =>
      load(
        `rule: r\npolicies: [{ id: p, effect: allow, resources: ['doc:a'], valid_from: tomorrow }]\ncases:${one}`,
      ),
    ).to.throw(/valid_from must match pattern/);
  });

  it('expands tables: yes where the policy applies, no where it does not, unknown failing closed', () => {
    const suite = load(`rule: r\nworld: tiny\n${POLICIES}\ncases:
  - { table: context, principal: prn_a, resource: 'op:eq', policy: pol_eq, yes: [{ v: x }], no: [{}] }
  - table: context
    principal: prn_a
    resource: tri:gt
    policy: pol_no
    otherwise: pol_base
    yes: [{ n: 2 }]
    no: [{ n: 0 }]
    unknown: [{}]
  - { table: identifier, principal: prn_a, type: db, policy: pol_glob, yes: [pay-1], no: [play-1] }
  - { table: action, principal: prn_a, resource: 'act:repo', policy: pol_repo, yes: [repo:push], no: [read] }
`);
    expect(
      suite.cases.map((c) => [c.name, c.resource, c.action ?? 'read', c.context, c.allowed, c.reasons]),
    ).to.deep.equal([
      ['op:eq holds for {"v":"x"}', 'op:eq', 'read', { v: 'x' }, true, ['POLICY_ALLOW pol_eq']],
      ['op:eq does not hold for {}', 'op:eq', 'read', {}, false, ['NO_MATCHING_POLICY']],
      [
        'tri:gt is true for {"n":2}: the deny applies',
        'tri:gt',
        'read',
        { n: 2 },
        false,
        ['POLICY_DENY pol_no'],
      ],
      [
        'tri:gt is false for {"n":0}: the deny does not apply',
        'tri:gt',
        'read',
        { n: 0 },
        true,
        ['POLICY_ALLOW pol_base'],
      ],
      ['tri:gt is unknown for {}: the deny applies', 'tri:gt', 'read', {}, false, ['POLICY_DENY pol_no']],
      ['db: matches "pay-1"', 'db:pay-1', 'read', undefined, true, ['POLICY_ALLOW pol_glob']],
      ['db: does not match "play-1"', 'db:play-1', 'read', undefined, false, ['NO_MATCHING_POLICY']],
      ['act:repo: repo:push is granted', 'act:repo', 'repo:push', undefined, true, ['POLICY_ALLOW pol_repo']],
      ['act:repo: read is not', 'act:repo', 'read', undefined, false, ['NO_MATCHING_POLICY']],
    ]);
    // An identifier table's rows are identifiers: a context there is a mistake of the file.
    expect(() =>
      load(`rule: r\nworld: tiny\n${POLICIES}\ncases:
  - { table: identifier, principal: prn_a, type: db, policy: pol_glob, yes: [{ v: 1 }] }`),
    ).to.throw(/does not fit its schema/);
  });
});
