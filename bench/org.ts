import type { SeedDelegation, SeedGroup, SeedMembership, SeedPrincipal } from '../src/seed/bulk.js';
import type { Attributes } from '../src/principals/model.js';
import { type PrincipalType } from '../src/vocabulary/principals.js';

/** Small deterministic PRNG (mulberry32), so every run generates the same organisation. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A syntactically valid ULID-based id, deterministic from a counter and a creation time. */
export function seededId(prefix: string, n: number, time: number): string {
  let t = time;
  let timePart = '';
  for (let i = 0; i < 10; i += 1) {
    timePart = CROCKFORD[t % 32] + timePart;
    t = Math.floor(t / 32);
  }
  let rest = '';
  let k = n;
  for (let i = 0; i < 16; i += 1) {
    rest = CROCKFORD[k % 32] + rest;
    k = Math.floor(k / 32);
  }
  return `${prefix}_${timePart}${rest}`;
}

export const FIRST = [
  'Ada',
  'Alan',
  'Grace',
  'Linus',
  'Margaret',
  'Ken',
  'Barbara',
  'Edsger',
  'Frances',
  'Donald',
  'Radia',
  'Tim',
  'Hedy',
  'Dennis',
  'Katherine',
  'John',
  'Sophie',
  'Guido',
  'Anita',
  'Bjarne',
  'Joan',
  'Niklaus',
  'Shafi',
  'Whitfield',
  'Lynn',
  'Vint',
  'Karen',
  'Leslie',
  'Sara',
  'Yukihiro',
];
export const LAST = [
  'Lovelace',
  'Turing',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Thompson',
  'Liskov',
  'Dijkstra',
  'Allen',
  'Knuth',
  'Perlman',
  'Berners-Lee',
  'Lamarr',
  'Ritchie',
  'Johnson',
  'McCarthy',
  'Wilson',
  'van Rossum',
  'Borg',
  'Stroustrup',
  'Clarke',
  'Wirth',
  'Goldwasser',
  'Diffie',
  'Conway',
  'Cerf',
  'Jones',
  'Lamport',
  'Haas',
  'Matsumoto',
];
export const DEPARTMENTS = [
  'engineering',
  'sales',
  'marketing',
  'finance',
  'legal',
  'security',
  'support',
  'operations',
  'hr',
  'product',
  'design',
  'data',
  'research',
  'it',
  'procurement',
];
export const TEAMS = Array.from({ length: 60 }, (_, i) => `team-${String(i).padStart(2, '0')}`);
export const ROLES = [
  'engineer',
  'senior engineer',
  'staff engineer',
  'manager',
  'director',
  'analyst',
  'designer',
  'account executive',
  'recruiter',
  'counsel',
  'sre',
  'security engineer',
  'data scientist',
  'support agent',
  'product manager',
];
export const LOCATIONS = [
  'nyc',
  'sfo',
  'lon',
  'ber',
  'par',
  'tok',
  'sgp',
  'syd',
  'tor',
  'sao',
  'dub',
  'ams',
  'blr',
  'sea',
  'aus',
  'chi',
  'mad',
  'mil',
  'zrh',
  'tlv',
];
export const ENVIRONMENTS = ['prod', 'staging', 'dev', 'test'];
const SERVICE_TYPES = ['batch', 'api', 'etl', 'ci', 'monitoring', 'backup', 'integration', 'stream'];
export const MODELS = ['gpt-4o', 'claude-3', 'llama-3', 'mistral-large', 'gemini-1.5', 'internal-7b'];
const CAPABILITIES = [
  'read_tickets',
  'write_tickets',
  'code_execution',
  'web_search',
  'file_read',
  'file_write',
  'email_send',
  'db_query',
  'payments',
  'calendar',
  'shell',
  'summarise',
];
const TOOLS = Array.from({ length: 30 }, (_, i) => `tool-${i}`);
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-1', 'ap-northeast-1'];
const TIERS = ['tier-0', 'tier-1', 'tier-2', 'tier-3', 'tier-4'];
export const PROJECTS = Array.from({ length: 200 }, (_, i) => `project-${i}`);
const COMPLIANCE = ['sox', 'pci', 'hipaa', 'gdpr', 'iso27001', 'soc2'];
const LANGUAGES = ['en', 'de', 'fr', 'ja', 'es', 'pt', 'zh'];

/**
 * Who an organisation holds, without their records: what the access side of the benchmarks
 * (resources, policies, requests, delegations) draws on. `generateOrg` gives it with every
 * record; `OrgStream` builds it up while the records go by a batch at a time.
 */
export interface OrgOutline {
  /** Every principal, in the order generated: people first, then service accounts, agents, API keys. */
  principals: readonly { id: string; type: PrincipalType }[];
  groups: readonly { id: string }[];
  /** The people's ids. */
  users: readonly string[];
  /** Group ids by nesting level, the roots first. */
  groupLevels: readonly (readonly string[])[];
}

export interface Org extends OrgOutline {
  principals: SeedPrincipal[];
  groups: SeedGroup[];
  memberships: SeedMembership[];
  nesting: SeedMembership[];
  users: string[];
  groupLevels: string[][];
  /** Users with at least three levels of reports below them. */
  managers: string[];
}

export interface OrgShape {
  principals: number;
  groups: number;
  seed: number;
  now: number;
  /**
   * Levels that grow with the organisation: the manager tree's and the group forest's levels keep
   * the sizes they have at 100,000 principals and 5,000 groups in proportion (where the fixed
   * levels, without this, give every organisation 1,111 people with reports and 2,500 groups
   * above the lowest level). At exactly that size both are the same.
   */
  proportional?: boolean;
}

/** Where each level of the manager tree ends (exclusive, levels 0-3); everyone after is level 4. */
function peopleLevelEnds(shape: OrgShape): number[] {
  const f = shape.proportional ? shape.principals / 100_000 : 1;
  const sizes = [1, 10, 100, 1_000].map((n, i) => (i === 0 ? 1 : Math.max(1, Math.round(n * f))));
  let end = 0;
  return sizes.map((n) => (end += n));
}

/** Where each level of the group forest ends (exclusive, levels 0-2); every group after is level 3. */
function groupLevelEnds(shape: OrgShape): number[] {
  if (!shape.proportional) return [100, 700, 2_500];
  const g = shape.groups / 5_000;
  const roots = Math.max(1, Math.round(100 * g));
  return [roots, Math.max(roots, Math.round(700 * g)), Math.max(roots, Math.round(2_500 * g))];
}

const levelOf = (i: number, ends: readonly number[]): number => {
  let level = 0;
  while (level < ends.length && i >= ends[level]!) level += 1;
  return level;
};

const DAY = 86_400_000;

/**
 * The records of an organisation drawn from one random stream: each call consumes it in a fixed
 * order, so the same calls in the same order draw the same organisation.
 */
class OrgDraw {
  private readonly start: number;
  private n = 0;

  constructor(
    private readonly random: () => number,
    private readonly now: number,
  ) {
    this.start = now - 3 * 365 * DAY;
  }

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)]!;
  }

  some<T>(list: readonly T[], max: number): T[] {
    const n = 1 + Math.floor(this.random() * max);
    return [...new Set(Array.from({ length: n }, () => this.pick(list)))];
  }

  private created(): number {
    return this.start + Math.floor(this.random() * (this.now - this.start - DAY));
  }

  /** The `i`-th person, at `level` of the manager tree, reporting to someone of `managerPool`. */
  user(i: number, level: number, managerPool: readonly string[]): SeedPrincipal {
    const { random } = this;
    const created = this.created();
    const id = seededId('prn', this.n++, created);
    const first = this.pick(FIRST);
    const last = this.pick(LAST);
    const attributes: Attributes = {
      department: this.pick(DEPARTMENTS),
      team: this.pick(TEAMS),
      role: level <= 2 ? 'director' : level === 3 ? 'manager' : this.pick(ROLES),
      location: this.pick(LOCATIONS),
      language: this.pick(LANGUAGES),
      employee_type: random() < 0.85 ? 'employee' : 'contractor',
      cost_tier: this.pick(TIERS),
    };
    if (managerPool.length > 0) attributes['manager_id'] = this.pick(managerPool);
    if (random() < 0.3) attributes['projects'] = this.some(PROJECTS, 4);
    if (random() < 0.2) attributes['compliance'] = this.some(COMPLIANCE, 2);
    const loginRoll = random();
    return {
      id,
      type: 'USER',
      name: `${first} ${last}`,
      email: `${first}.${last}.${i}@example.com`.toLowerCase().replace(/\s+/g, ''),
      attributes,
      metadata: { cost_center: `cc-${Math.floor(random() * 300)}` },
      connectorSource: random() < 0.8 ? 'okta' : 'entra',
      connectorId: `00u${i.toString(36)}`,
      createdAt: new Date(created).toISOString(),
      lastLogin: loginRoll < 0.1 ? null : new Date(this.now - Math.floor(random() * 365 * DAY)).toISOString(),
    };
  }

  /** The `i`-th non-human identity of its type, owned by one of `users` for the most part. */
  nonHuman(type: Exclude<PrincipalType, 'USER'>, i: number, users: readonly string[]): SeedPrincipal {
    const { random } = this;
    const created = this.created();
    const { name, attributes } = this.nonHumanTraits(type, i);
    attributes['environment'] = this.pick(ENVIRONMENTS);
    attributes['team'] = this.pick(TEAMS);
    attributes['region'] = this.pick(REGIONS);
    if (random() < 0.7) attributes['manager_id'] = this.pick(users);
    return {
      id: seededId('prn', this.n++, created),
      type,
      name,
      attributes,
      metadata:
        random() < 0.85
          ? {
              owner: `${this.pick(FIRST).toLowerCase()}@example.com`,
              repository: `git@example.com:${this.pick(PROJECTS)}.git`,
            }
          : {},
      createdAt: new Date(created).toISOString(),
    };
  }

  private nonHumanTraits(
    type: Exclude<PrincipalType, 'USER'>,
    i: number,
  ): { name: string; attributes: Attributes } {
    const { random } = this;
    switch (type) {
      case 'SERVICE_ACCOUNT':
        return {
          name: `svc-${this.pick(SERVICE_TYPES)}-${i}`,
          attributes: {
            service_type: this.pick(SERVICE_TYPES),
            project: this.pick(PROJECTS),
            data_classification: this.pick(['public', 'internal', 'confidential', 'restricted']),
          },
        };
      case 'AI_AGENT':
        return {
          name: `agent-${this.pick(['support', 'coding', 'research', 'finance', 'sales'])}-${i}`,
          attributes: {
            model: this.pick(MODELS),
            capabilities: this.some(CAPABILITIES, 4),
            allowed_tools: random() < 0.05 ? ['*'] : this.some(TOOLS, 8),
            autonomy: this.pick(['supervised', 'semi', 'autonomous']),
          },
        };
      case 'API_KEY':
        return {
          name: `key-${this.pick(PROJECTS)}-${i}`,
          attributes: {
            scope_level: this.pick(['read', 'write', 'admin']),
            rotation: this.pick(['30d', '90d', 'never']),
          },
        };
    }
  }

  /** The `i`-th group, nested in one of `parentPool` unless it is a root (an empty pool). */
  group(i: number, parentPool: readonly string[]): { group: SeedGroup; parent: string | null } {
    const created = this.created();
    const id = seededId('grp', i, created);
    const group = {
      id,
      name: `${this.pick(DEPARTMENTS)}-${this.pick(['admins', 'readers', 'oncall', 'leads', 'guild', 'project'])}-${i}`,
      createdAt: new Date(created).toISOString(),
    };
    return { group, parent: parentPool.length > 0 ? this.pick(parentPool) : null };
  }

  /** A principal's direct groups: one to three for a person, none or one for anything else. */
  memberships(p: { id: string; type: PrincipalType }, groups: readonly { id: string }[]): SeedMembership[] {
    const { random } = this;
    const k = p.type === 'USER' ? 1 + Math.floor(random() * 3) : random() < 0.5 ? 1 : 0;
    const chosen = new Set<string>();
    for (let j = 0; j < k; j += 1) chosen.add(this.pick(groups).id);
    return [...chosen].map((groupId) => ({ groupId, memberId: p.id }));
  }
}

/** How many principals of each type an organisation has: 70% people, 15% service accounts, 8% agents. */
function typeCounts(principals: number): Record<PrincipalType, number> {
  const counts: Record<PrincipalType, number> = {
    USER: Math.round(principals * 0.7),
    SERVICE_ACCOUNT: Math.round(principals * 0.15),
    AI_AGENT: Math.round(principals * 0.08),
    API_KEY: 0,
  };
  counts.API_KEY = principals - counts.USER - counts.SERVICE_ACCOUNT - counts.AI_AGENT;
  return counts;
}

const NON_HUMAN = ['SERVICE_ACCOUNT', 'AI_AGENT', 'API_KEY'] as const;

/**
 * A realistic organisation: a manager tree of people (CEO, VPs, directors, managers, staff),
 * non-human identities owned by people, attributes drawn from a few dozen keys, and a forest of
 * nested groups (up to four levels) with people in one to three groups each.
 */
export function generateOrg(shape: OrgShape): Org {
  const draw = new OrgDraw(rng(shape.seed), shape.now);
  const counts = typeCounts(shape.principals);
  const principals: SeedPrincipal[] = [];
  const users: string[] = [];
  const levels: string[][] = [[], [], [], [], []];
  const peopleEnds = peopleLevelEnds(shape);
  for (let i = 0; i < counts.USER; i += 1) {
    const level = levelOf(i, peopleEnds);
    const p = draw.user(i, level, level === 0 ? [] : levels[level - 1]!);
    principals.push(p);
    users.push(p.id);
    levels[level]!.push(p.id);
  }
  for (const type of NON_HUMAN) {
    for (let i = 0; i < counts[type]; i += 1) principals.push(draw.nonHuman(type, i, users));
  }

  // Groups: a forest, its roots and each level below fanning out, at most four levels deep.
  const groups: SeedGroup[] = [];
  const nesting: SeedMembership[] = [];
  const groupLevels: string[][] = [[], [], [], []];
  const groupEnds = groupLevelEnds(shape);
  for (let i = 0; i < shape.groups; i += 1) {
    const level = levelOf(i, groupEnds);
    const { group, parent } = draw.group(i, level === 0 ? [] : groupLevels[level - 1]!);
    groups.push(group);
    groupLevels[level]!.push(group.id);
    if (parent !== null) nesting.push({ groupId: parent, memberId: group.id });
  }
  const memberships: SeedMembership[] = [];
  if (groups.length > 0) for (const p of principals) memberships.push(...draw.memberships(p, groups));
  return { principals, groups, memberships, nesting, users, groupLevels, managers: levels[2]! };
}

/** One batch of an `OrgStream`: principals, and the direct group memberships they have. */
export interface OrgBatch {
  principals: SeedPrincipal[];
  memberships: SeedMembership[];
}

/**
 * The organisation of `generateOrg` at sizes whose records are better not all held at once: the
 * groups come whole, the principals a batch at a time (`batches`), each with its memberships, and
 * what the outline needs of them stays once they have gone by. Groups, principals and memberships
 * are drawn from random streams of their own (seeds `seed + 1`, `seed`, `seed + 2`), so the
 * organisation is deterministic, though not the one `generateOrg` draws from the same seed.
 */
export class OrgStream implements OrgOutline {
  readonly groups: SeedGroup[] = [];
  readonly nesting: SeedMembership[] = [];
  readonly groupLevels: string[][] = [[], [], [], []];
  /** The principals drawn so far (all of them once `batches` is done). */
  readonly principals: { id: string; type: PrincipalType }[] = [];
  readonly users: string[] = [];
  /** Users with at least three levels of reports below them, once `batches` is done. */
  readonly managers: string[] = [];
  private drawn = false;

  constructor(private readonly shape: OrgShape) {
    const draw = new OrgDraw(rng(shape.seed + 1), shape.now);
    const ends = groupLevelEnds(shape);
    for (let i = 0; i < shape.groups; i += 1) {
      const level = levelOf(i, ends);
      const { group, parent } = draw.group(i, level === 0 ? [] : this.groupLevels[level - 1]!);
      this.groups.push(group);
      this.groupLevels[level]!.push(group.id);
      if (parent !== null) this.nesting.push({ groupId: parent, memberId: group.id });
    }
  }

  /** The principals, `size` at a time, people first; once only. */
  *batches(size: number): Generator<OrgBatch> {
    if (this.drawn) throw new Error('an organisation stream is drawn once');
    this.drawn = true;
    const draw = new OrgDraw(rng(this.shape.seed), this.shape.now);
    const joins = new OrgDraw(rng(this.shape.seed + 2), this.shape.now);
    const counts = typeCounts(this.shape.principals);
    const ends = peopleLevelEnds(this.shape);
    // Only the levels that manage someone are kept; the last one is everyone else.
    const levels: string[][] = [[], [], [], []];
    let batch: OrgBatch = { principals: [], memberships: [] };
    const add = (p: SeedPrincipal): OrgBatch | undefined => {
      this.principals.push({ id: p.id, type: p.type });
      batch.principals.push(p);
      if (this.groups.length > 0) batch.memberships.push(...joins.memberships(p, this.groups));
      if (batch.principals.length < size) return undefined;
      const full = batch;
      batch = { principals: [], memberships: [] };
      return full;
    };
    for (let i = 0; i < counts.USER; i += 1) {
      const level = levelOf(i, ends);
      const p = draw.user(i, level, level === 0 ? [] : levels[level - 1]!);
      this.users.push(p.id);
      if (level < levels.length) levels[level]!.push(p.id);
      const full = add(p);
      if (full) yield full;
    }
    this.managers.push(...levels[2]!);
    for (const type of NON_HUMAN) {
      for (let i = 0; i < counts[type]; i += 1) {
        const full = add(draw.nonHuman(type, i, this.users));
        if (full) yield full;
      }
    }
    if (batch.principals.length > 0) yield batch;
  }
}

/** A delegation chain the benchmarks decide along: a person, an agent, and a sub-agent of it. */
export interface DelegationChain {
  user: string;
  agent: string;
  /** An agent the first one delegates to in turn, when it has one. */
  subAgent: string | null;
}

/**
 * Who acts for whom, as an organisation that uses agents has it: each AI agent acts for one to
 * three people, and a fifth of the agents hand work on to another agent (a chain of three).
 * Delegations cover every action and resource, and expire 30 days after `now` or after the
 * day the benchmark runs, whichever is later.
 */
export function generateDelegations(
  org: OrgOutline,
  seed: number,
  now: number,
): { delegations: SeedDelegation[]; chains: DelegationChain[] } {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const agents = org.principals.filter((p) => p.type === 'AI_AGENT').map((p) => p.id);
  const delegations: SeedDelegation[] = [];
  const chains: DelegationChain[] = [];
  const createdAt = new Date(now).toISOString();
  // Thirty days after the organisation's date or after today, whichever is later: a benchmark
  // run long after its fixed date still finds the delegations active.
  const expiresAt = new Date(Math.max(now, Date.now()) + 30 * 86_400_000).toISOString();
  const add = (delegatorId: string, delegateId: string): void => {
    delegations.push({
      id: seededId('dlg', delegations.length, now),
      delegatorId,
      delegateId,
      actions: ['*'],
      resources: null,
      expiresAt,
      createdAt,
    });
  };
  agents.forEach((agent, i) => {
    const subAgent = random() < 0.2 ? agents[(i + 1) % agents.length]! : null;
    if (subAgent !== null && subAgent !== agent) add(agent, subAgent);
    const people = new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(org.users)));
    for (const user of people) {
      add(user, agent);
      chains.push({ user, agent, subAgent: subAgent !== agent ? subAgent : null });
    }
  });
  return { delegations, chains };
}
