/**
 * The decision index of a generated organisation, built in a process of its own and written as a
 * snapshot for bench/index-scale.ts: the organisation of `generateOrg` at a size (drawn a batch at
 * a time by `OrgStream`), the resources and policies of bench/policy-set.ts and the delegations of
 * its agents, put straight into a `PolicyIndex` (no database: the rows the service would read from
 * Neo4j, made here), then saved where the service will read it at its start. It answers what the
 * build cost and what the benchmark's requests are drawn from.
 */
import { performance } from 'node:perf_hooks';
import { compilePolicy, toIxDelegation, type Instant, type PrincipalFields } from '../src/decisions/model.js';
import { PolicyIndex } from '../src/decisions/policy-index.js';
import { writeSnapshot } from '../src/decisions/snapshot.js';
import type { FeedPosition } from '../src/events/feed.js';
import { bodyFields, checkPolicyBody, type Policy } from '../src/policies/model.js';
import type { SeedPrincipal } from '../src/seed/bulk.js';
import { generateDelegations, OrgStream, rng } from './org.js';
import {
  generatePolicies,
  generateResources,
  Membership,
  requestStream,
  type BenchRequest,
} from './policy-set.js';

export interface GenerateRun {
  principals: number;
  groups: number;
  policies: number;
  resources: number;
  /** Where the service will look for its snapshot, and what it must say to be read. */
  file: string;
  database: string;
  feed: FeedPosition[];
}

export interface GenerateResult {
  build_s: number;
  generate_s: number;
  heap_mb: number;
  off_heap_mb: number;
  rss_mb: number;
  snapshot_mb: number;
  snapshot_write_s: number;
  counts: { principals: number; groups: number; policies: number; resources: number; delegations: number };
  requests: BenchRequest[];
  /** Principals reached by the most policies in a sample, and resources reaching the most principals. */
  connected: string[];
  anyone: string[];
  popular: { type: string; identifier: string }[];
  registered: { type: string; identifier: string }[];
}

const MB = 1024 * 1024;
const NOW = Date.UTC(2026, 10, 1);

const instant = (iso: string | null | undefined): Instant => {
  if (!iso) return [NaN, 0];
  const ms = Date.parse(iso);
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
};

/** A generated principal as the index's table writes it. */
function fieldsOf(p: SeedPrincipal): PrincipalFields {
  return {
    id: p.id,
    type: p.type,
    status: p.status ?? 'active',
    name: p.name,
    email: p.email ?? null,
    connector_source: p.connectorSource ?? null,
    connector_id: p.connectorId ?? null,
    created: instant(p.createdAt),
    updated: instant(p.createdAt),
    last_login: instant(p.lastLogin),
    risk_score: 0,
    privileges: '[]',
    attributes: p.attributes,
    metadata: p.metadata,
  };
}

async function generate(run: GenerateRun): Promise<GenerateResult> {
  const started = performance.now();
  let generateMs = 0;
  const timed = <T>(work: () => T): T => {
    const t = performance.now();
    try {
      return work();
    } finally {
      generateMs += performance.now() - t;
    }
  };
  const index = new PolicyIndex();
  const org = timed(
    () =>
      new OrgStream({
        principals: run.principals,
        groups: run.groups,
        seed: 42,
        now: NOW,
        proportional: true,
      }),
  );
  const membership = new Membership();
  const parents = new Map<string, string[]>();
  for (const n of org.nesting) {
    membership.nest(n.groupId, n.memberId);
    const list = parents.get(n.memberId);
    if (list) list.push(n.groupId);
    else parents.set(n.memberId, [n.groupId]);
  }
  const addedAt = NOW - 30 * 86_400_000;
  for (const g of org.groups) {
    const up = parents.get(g.id) ?? [];
    index.putGroup(
      g.id,
      g.name,
      up,
      up.map(() => addedAt),
    );
  }
  const drawn = org.batches(10_000);
  for (;;) {
    const next = timed(() => drawn.next());
    if (next.done) break;
    const groupsOf = new Map<string, string[]>();
    for (const m of next.value.memberships) {
      membership.add(m.groupId, m.memberId);
      const list = groupsOf.get(m.memberId);
      if (list) list.push(m.groupId);
      else groupsOf.set(m.memberId, [m.groupId]);
    }
    for (const p of next.value.principals) {
      const groups = groupsOf.get(p.id) ?? [];
      index.putFields(
        p.id,
        fieldsOf(p),
        groups,
        groups.map(() => addedAt),
      );
    }
  }
  const resources = timed(() => generateResources(org, run.resources, 43, NOW));
  for (const r of resources)
    index.putResource(r.type, r.identifier, {
      type: r.type,
      identifier: r.identifier,
      attributes: r.attributes,
    });
  const set = timed(() =>
    generatePolicies(org, resources, membership, {
      policies: run.policies,
      resources: run.resources,
      seed: 44,
      now: NOW,
      blastPrincipals: Math.floor(run.principals / 10),
    }),
  );
  const at = new Date(NOW - 100 * 86_400_000).toISOString();
  const compiled = set.policies.map((seed) => {
    const body = checkPolicyBody({ ...seed.body, status: seed.body.status ?? 'active' }, '', NOW);
    const fields = bodyFields(body);
    const policy: Policy = {
      id: seed.id,
      ...fields,
      version: 1,
      activated_at: fields.status === 'active' ? at : null,
      created_at: at,
      created_by: 'bench',
      updated_at: at,
      updated_by: 'bench',
    };
    return compilePolicy(policy);
  });
  await index.prepareMatches(compiled, () => undefined);
  for (const policy of compiled) index.putPolicy(policy);
  const { delegations } = timed(() => generateDelegations(org, 45, NOW));
  for (const d of delegations) {
    index.putDelegation(
      d.id,
      toIxDelegation({
        id: d.id,
        delegator_id: d.delegatorId,
        delegate_id: d.delegateId,
        actions: d.actions,
        resources: d.resources ?? null,
        expires_at: d.expiresAt,
        status: 'active',
      }),
    );
  }
  const buildMs = performance.now() - started - generateMs;

  // What the benchmark asks about.
  const requests = requestStream(org, set, membership, 2_000, 77);
  const random = rng(99);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const ids = org.principals.map((p) => p.id);
  const reach = Array.from({ length: Math.min(3_000, ids.length) }, () => pick(ids))
    .map((id) => ({ id, policies: index.policiesOf(index.principals.get(id)!).size }))
    .sort((a, b) => b.policies - a.policies);
  const connected = reach.slice(0, Math.max(10, Math.floor(reach.length * 0.02))).map((r) => r.id);
  const registered = resources.map((r) => ({ type: r.type, identifier: r.identifier }));
  const popular = Array.from({ length: Math.min(3_000, registered.length) }, () => pick(registered))
    .map((r) => {
      let n = 0;
      for (const policy of index.candidates(r.type, r.identifier))
        if (policy.effect === 'allow') n += index.subjectRows(policy).size;
      return { ...r, reach: n };
    })
    .sort((a, b) => b.reach - a.reach)
    .slice(0, Math.max(10, Math.floor(3_000 * 0.02)))
    .map(({ type, identifier }) => ({ type, identifier }));

  const counts = {
    principals: index.principals.size,
    groups: index.groups.size,
    policies: index.policies.size,
    resources: index.resourceTable.size,
    delegations: index.delegations.size,
  };
  const collect = (globalThis as { gc?: () => void }).gc;
  collect?.();
  collect?.();
  const heapMb = process.memoryUsage().heapUsed / MB;
  const t = performance.now();
  const bytes = await writeSnapshot(index, run.file, {
    database: run.database,
    feed: run.feed,
    privilegesPending: false,
  });
  return {
    build_s: buildMs / 1000,
    generate_s: generateMs / 1000,
    heap_mb: heapMb,
    off_heap_mb: index.offHeapBytes / MB,
    rss_mb: process.memoryUsage().rss / MB,
    snapshot_mb: bytes / MB,
    snapshot_write_s: (performance.now() - t) / 1000,
    counts,
    requests,
    connected,
    anyone: Array.from({ length: 200 }, () => pick(ids)),
    popular,
    registered: Array.from({ length: 200 }, () => pick(registered)),
  };
}

process.on('message', (run: GenerateRun) => {
  generate(run).then(
    (result) => process.send!({ ok: true, result }),
    (err: unknown) =>
      process.send!({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
