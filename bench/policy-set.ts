import type { SeedMembership, SeedPolicy, SeedResource } from '../src/seed/bulk.js';
import type { PolicyBody } from '../src/policies/model.js';
import { globMatches, compileGlob, isGlob, actionMatches } from '../src/policies/patterns.js';
import type { Org, OrgOutline } from './org.js';
import { DEPARTMENTS, ENVIRONMENTS, MODELS, rng, seededId, TEAMS } from './org.js';

/**
 * The access side of the benchmark's organisation: registered resources of about twenty types,
 * policies of realistic shape (mostly on groups, some on principals directly, some `match`
 * queries; 80% allow; exact identifiers and globs; a few conditions) and streams of decision
 * requests over them. Everything is deterministic from its seed.
 */

export const SYSTEMS = [
  'payments',
  'billing',
  'orders',
  'search',
  'ledger',
  'identity',
  'catalog',
  'shipping',
  'pricing',
  'fraud',
  'analytics',
  'reporting',
  'inventory',
  'checkout',
  'messaging',
  'notifications',
  'crm',
  'hr',
  'payroll',
  'support',
  'docs',
  'web',
  'mobile',
  'gateway',
  'auth',
  'audit',
  'ml',
  'recommendations',
  'ads',
  'media',
  'storage',
  'backup',
  'monitoring',
  'logging',
  'ci',
  'build',
  'infra',
  'network',
  'vault',
  'data',
];

/** Resource environments, `restricted` the one conditions exclude. */
const RESOURCE_ENVIRONMENTS = ['prod', 'staging', 'dev', 'test', 'restricted'];
const ENVIRONMENT_WEIGHTS = [0.35, 0.25, 0.2, 0.15, 0.05];

const CRUD = ['read', 'write', 'delete', 'list', 'admin'];
/** The action vocabulary of each resource type; prefixed families get `family:*` wildcards. */
export const TYPE_ACTIONS: Record<string, string[]> = {
  database: ['read', 'write', 'query', 'delete', 'db:query', 'db:write', 'db:admin'],
  table: ['read', 'write', 'query', 'db:query', 'db:write'],
  repo: ['repo:read', 'repo:write', 'repo:admin', 'read'],
  pipeline: ['read', 'invoke', 'write', 'admin', 'deploy'],
  function: ['invoke', 'read', 'deploy'],
  service: ['read', 'write', 'invoke', 'deploy', 'admin'],
  api: ['read', 'write', 'invoke'],
  tool: ['invoke'],
  queue: ['read', 'write', 'admin'],
  topic: ['read', 'write', 'admin'],
  s3_bucket: ['read', 'write', 'delete', 'list'],
  secret: ['read', 'write', 'admin'],
  cluster: ['read', 'admin', 'deploy', 'invoke'],
  namespace: ['read', 'write', 'deploy', 'admin'],
  vm: ['read', 'admin', 'invoke'],
  dashboard: CRUD,
  report: ['read', 'write', 'query'],
  document: CRUD,
  feature_flag: ['read', 'write', 'admin'],
  project: CRUD,
};
export const RESOURCE_TYPES = Object.keys(TYPE_ACTIONS);

/**
 * The actions of a policy on a resource type: now and then every action, or one family's
 * (`repo:*`), mostly one to three of the type's actions.
 */
export function drawActions(type: string, random: () => number): string[] {
  const vocabulary = TYPE_ACTIONS[type]!;
  const roll = random();
  if (roll < 0.03) return ['*'];
  const family = vocabulary.find((a) => a.includes(':'));
  if (family && roll < 0.1) return [`${family.slice(0, family.indexOf(':'))}:*`];
  const n = 1 + Math.floor(random() * random() * 3);
  return [...new Set(Array.from({ length: n }, () => vocabulary[Math.floor(random() * vocabulary.length)]!))];
}
/** Every concrete action some resource type has. */
export const ACTIONS = [...new Set(Object.values(TYPE_ACTIONS).flat())].sort();

/** The tools agents have in `allowed_tools` (bench/org.ts). */
const TOOL_COUNT = 30;

export interface PolicySetShape {
  policies: number;
  resources: number;
  seed: number;
  now: number;
  /** Principals the blast-radius policy should reach (through root groups). */
  blastPrincipals: number;
}

export interface PolicySet {
  resources: SeedResource[];
  policies: SeedPolicy[];
  /** The allow policy whose groups reach about `blastPrincipals` principals. */
  blastPolicy: string;
}

/**
 * Transitive membership of the organisation's groups, for generating and choosing subjects: from
 * an organisation's memberships, or built up with `nest` and `add` (before the first question).
 */
export class Membership {
  private readonly children = new Map<string, string[]>();
  private readonly direct = new Map<string, string[]>();
  private readonly cache = new Map<string, string[]>();

  constructor(org?: Pick<Org, 'nesting' | 'memberships'>) {
    for (const n of org?.nesting ?? []) this.nest(n.groupId, n.memberId);
    for (const m of org?.memberships ?? []) this.add(m.groupId, m.memberId);
  }

  /** A group nested in another. */
  nest(groupId: string, childId: string): void {
    push(this.children, groupId, childId);
  }

  /** A principal made a direct member of a group. */
  add(groupId: string, memberId: string): void {
    push(this.direct, groupId, memberId);
  }

  /** Every direct membership of a principal, group by group. */
  *memberships(): Generator<SeedMembership> {
    for (const [groupId, members] of this.direct) for (const memberId of members) yield { groupId, memberId };
  }

  /** Every principal in the group, through nesting. */
  members(groupId: string): string[] {
    let out = this.cache.get(groupId);
    if (out) return out;
    const set = new Set<string>(this.direct.get(groupId) ?? []);
    for (const child of this.children.get(groupId) ?? []) for (const m of this.members(child)) set.add(m);
    out = [...set];
    this.cache.set(groupId, out);
    return out;
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Registered resources: `<system>-<environment>-<n>` per type, and the agents' tools. */
export function generateResources(org: OrgOutline, count: number, seed: number, now: number): SeedResource[] {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const weighted = (): string => {
    let roll = random();
    for (let i = 0; i < ENVIRONMENT_WEIGHTS.length; i += 1) {
      roll -= ENVIRONMENT_WEIGHTS[i]!;
      if (roll < 0) return RESOURCE_ENVIRONMENTS[i]!;
    }
    return 'prod';
  };
  const createdAt = new Date(now - 200 * 86_400_000).toISOString();
  const out: SeedResource[] = [];
  for (let i = 0; i < TOOL_COUNT; i += 1) {
    out.push({ type: 'tool', identifier: `tool-${i}`, attributes: { environment: 'prod' }, createdAt });
  }
  const types = RESOURCE_TYPES.filter((t) => t !== 'tool');
  const counters = new Map<string, number>();
  while (out.length < count) {
    const type = types[out.length % types.length]!;
    const system = pick(SYSTEMS);
    const environment = weighted();
    const key = `${type}:${system}-${environment}`;
    const n = (counters.get(key) ?? 0) + 1;
    counters.set(key, n);
    const attributes: Record<string, string> = {
      owner_team: pick(TEAMS),
      classification: pick(['public', 'internal', 'confidential', 'restricted']),
      region: pick(['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1']),
    };
    // A few carry no environment: conditions on it are then unknown.
    if (random() >= 0.05) attributes['environment'] = environment;
    out.push({
      type,
      identifier: `${system}-${environment}-${n}`,
      attributes,
      ownerId: random() < 0.8 ? pick(org.users) : null,
      createdAt,
    });
  }
  return out;
}

/** Match subjects of the search language, over attributes every principal of the type has. */
function matchQuery(random: () => number): NonNullable<PolicyBody['subjects']['match']> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const roll = random();
  if (roll < 0.35) return { type: 'AI_AGENT', attributes: { team: pick(TEAMS) } };
  if (roll < 0.5) return { type: 'AI_AGENT', attributes: { model: pick(MODELS), team: pick(TEAMS) } };
  if (roll < 0.7)
    return { type: 'SERVICE_ACCOUNT', attributes: { environment: pick(ENVIRONMENTS), team: pick(TEAMS) } };
  if (roll < 0.85) return { type: ['SERVICE_ACCOUNT', 'AI_AGENT'], attributes: { team: pick(TEAMS) } };
  return { type: 'USER', attributes: { department: pick(DEPARTMENTS), role: 'manager' } };
}

/** Policies of realistic shape, and the one reaching `blastPrincipals` principals. */
export function generatePolicies(
  org: OrgOutline,
  resources: readonly SeedResource[],
  membership: Membership,
  shape: PolicySetShape,
): PolicySet {
  const random = rng(shape.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const byType = new Map<string, SeedResource[]>();
  for (const r of resources) push(byType, r.type, r);
  const groupsByLevel = org.groupLevels;
  const pickGroup = (): string => {
    const roll = random();
    const level = roll < 0.03 ? 0 : roll < 0.15 ? 1 : roll < 0.5 ? 2 : 3;
    const pool = groupsByLevel[level]!.length > 0 ? groupsByLevel[level]! : org.groups.map((g) => g.id);
    return pick(pool);
  };
  const principalIds = org.principals.map((p) => p.id);

  const resourcesFor = (type: string, effect: 'allow' | 'deny'): PolicyBody['resources'] => {
    const pool = byType.get(type) ?? [];
    const n = effect === 'deny' ? 1 : 1 + Math.floor(random() * random() * 4);
    const out: PolicyBody['resources'] = [];
    for (let i = 0; i < n; i += 1) {
      const base = pick(pool);
      const [system, environment, number] = base.identifier.split('-') as [string, string, string];
      const roll = random();
      if (type === 'tool') out.push({ type, identifier: roll < 0.1 ? 'tool-*' : base.identifier });
      else if (roll < 0.72) out.push({ type, identifier: base.identifier });
      else if (roll < 0.8) out.push({ type, identifier: `${system}-legacy-${Math.floor(random() * 50)}` });
      else if (roll < 0.92) out.push({ type, identifier: `${system}-${environment}-*` });
      else if (roll < 0.97) out.push({ type, identifier: `${system}-*` });
      else out.push({ type, identifier: `${system}-*-${number.slice(-1)}` });
    }
    return out;
  };
  const actionsFor = (type: string): string[] => drawActions(type, random);
  const conditionsFor = (type: string): Record<string, unknown> | undefined => {
    const roll = random();
    const cidr = { 'context.ip': { $cidr: random() < 0.7 ? '10.0.0.0/8' : '192.168.0.0/16' } };
    const environment = { 'resource.attributes.environment': { $ne: 'restricted' } };
    if (type === 'tool') return undefined;
    if (roll < 0.1) return cidr;
    if (roll < 0.18) return environment;
    if (roll < 0.2) return { ...cidr, ...environment };
    return undefined;
  };

  const createdAt = new Date(shape.now - 100 * 86_400_000).toISOString();
  const policies: SeedPolicy[] = [];
  for (let i = 0; i < shape.policies; i += 1) {
    const effect = random() < 0.8 ? ('allow' as const) : ('deny' as const);
    const type = pick(RESOURCE_TYPES);
    const subjects: PolicyBody['subjects'] = {};
    const roll = random();
    if (roll < 0.65) subjects.groups = [...new Set([pickGroup(), ...(random() < 0.2 ? [pickGroup()] : [])])];
    else if (roll < 0.85) {
      subjects.principals = [
        ...new Set(Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(principalIds))),
      ];
    } else if (roll < 0.93) subjects.match = matchQuery(random);
    else {
      subjects.groups = [pickGroup()];
      subjects.principals = [pick(principalIds)];
    }
    const conditions = conditionsFor(type);
    const body: PolicyBody = {
      name: `${effect}-${type}-${i}`,
      effect,
      subjects,
      actions: actionsFor(type),
      resources: resourcesFor(type, effect),
      ...(conditions ? { conditions } : {}),
      status: random() < 0.03 ? 'disabled' : 'active',
    };
    policies.push({ id: seededId('pol', i, Date.parse(createdAt)), body, createdAt });
  }

  // The blast-radius policy: root groups until about `blastPrincipals` principals are reached.
  const reached = new Set<string>();
  const roots: string[] = [];
  for (const g of groupsByLevel[0]!) {
    if (reached.size >= shape.blastPrincipals) break;
    roots.push(g);
    for (const m of membership.members(g)) reached.add(m);
  }
  const blast = policies[0]!;
  const database = byType.get('database') ?? [];
  blast.body = {
    name: 'allow-analytics-read-wide',
    description: 'read access to the analytics databases for the whole of several departments',
    effect: 'allow',
    subjects: { groups: roots },
    actions: ['read', 'query'],
    resources: [
      { type: 'database', identifier: database[0]?.identifier ?? 'analytics-prod-1' },
      { type: 'database', identifier: database[1]?.identifier ?? 'analytics-prod-2' },
      { type: 'database', identifier: 'analytics-prod-*' },
    ],
    status: 'active',
  };
  return { resources: [...resources], policies, blastPolicy: blast.id };
}

/** A decision request as the API takes it (§5.2). */
export interface BenchRequest {
  principal_id: string;
  action: string;
  resource: { type: string; identifier: string; attributes?: Record<string, string> };
  context?: { ip: string };
}

/** The registered identifiers of a type a glob matches, each glob's found once. */
export function registeredMatching(
  byType: ReadonlyMap<string, readonly { identifier: string }[]>,
): (type: string, pattern: string) => string[] {
  const found = new Map<string, string[]>();
  return (type, pattern) => {
    const key = `${type}:${pattern}`;
    let identifiers = found.get(key);
    if (!identifiers) {
      const glob = compileGlob(pattern);
      identifiers = (byType.get(type) ?? [])
        .filter((r) => globMatches(glob, r.identifier))
        .map((r) => r.identifier);
      found.set(key, identifiers);
    }
    return identifiers;
  };
}

/** A request's source address: half in 10/8, a quarter in 192.168/16, a quarter in 172.16/16. */
export function sourceAddress(random: () => number): string {
  const roll = random();
  const octet = (): number => Math.floor(random() * 254) + 1;
  if (roll < 0.5) return `10.${octet()}.${octet()}.${octet()}`;
  if (roll < 0.75) return `192.168.${octet()}.${octet()}`;
  return `172.16.${octet()}.${octet()}`;
}

/**
 * A stream of requests: about 60% drawn from a policy (a principal it selects, one of its
 * resources or a registered one its glob matches, one of its actions), so that allows, denies
 * and conditions all come up; the rest random principal, registered resource and action.
 */
export function requestStream(
  org: OrgOutline,
  set: { resources: readonly SeedResource[]; policies: readonly SeedPolicy[] },
  membership: Membership,
  count: number,
  seed: number,
): BenchRequest[] {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const byType = new Map<string, SeedResource[]>();
  for (const r of set.resources) push(byType, r.type, r);
  const byTypeOf = new Map<string, string[]>();
  for (const p of org.principals) push(byTypeOf, p.type, p.id);
  const principalIds = org.principals.map((p) => p.id);
  const active = set.policies.filter((p) => (p.body.status ?? 'active') === 'active');
  const matching = registeredMatching(byType);
  const ip = (): string => sourceAddress(random);
  const out: BenchRequest[] = [];
  for (let i = 0; i < count; i += 1) {
    let principal: string;
    let type: string;
    let identifier: string;
    let action: string;
    if (random() < 0.6 && active.length > 0) {
      const policy = pick(active).body;
      const { subjects } = policy;
      const choices: (() => string)[] = [];
      for (const g of subjects.groups ?? [])
        choices.push(() => pick(membership.members(g).length > 0 ? membership.members(g) : principalIds));
      for (const p of subjects.principals ?? []) choices.push(() => p);
      if (subjects.match) {
        const types = [subjects.match.type ?? 'USER'].flat();
        choices.push(() => pick(byTypeOf.get(pick(types)) ?? principalIds));
      }
      principal = pick(choices)();
      const resource = pick(policy.resources);
      type = resource.type;
      if (isGlob(resource.identifier)) {
        const found = matching(type, resource.identifier);
        identifier = found.length > 0 ? pick(found) : resource.identifier.replace(/\*/g, 'x');
      } else identifier = resource.identifier;
      const pattern = pick(policy.actions);
      const concrete = TYPE_ACTIONS[type]!.filter((a) => actionMatches(pattern, a));
      action = concrete.length > 0 ? pick(concrete) : pattern.replace('*', 'read');
    } else {
      principal = pick(principalIds);
      type = pick(RESOURCE_TYPES);
      identifier = pick(byType.get(type) ?? [{ identifier: 'none' } as SeedResource]).identifier;
      action = pick(TYPE_ACTIONS[type]!);
    }
    const request: BenchRequest = { principal_id: principal, action, resource: { type, identifier } };
    if (random() < 0.1) request.resource.attributes = { environment: pick(RESOURCE_ENVIRONMENTS) };
    if (random() < 0.75) request.context = { ip: ip() };
    out.push(request);
  }
  return out;
}
