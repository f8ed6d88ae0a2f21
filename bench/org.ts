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

export interface Org {
  principals: SeedPrincipal[];
  groups: SeedGroup[];
  memberships: SeedMembership[];
  nesting: SeedMembership[];
  users: string[];
  /** Users with at least three levels of reports below them. */
  managers: string[];
}

export interface OrgShape {
  principals: number;
  groups: number;
  seed: number;
  now: number;
}

/**
 * A realistic organisation: a manager tree of people (CEO, VPs, directors, managers, staff),
 * non-human identities owned by people, attributes drawn from a few dozen keys, and a forest of
 * nested groups (up to four levels) with people in one to three groups each.
 */
export function generateOrg(shape: OrgShape): Org {
  const random = rng(shape.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const some = <T>(list: readonly T[], max: number): T[] => {
    const n = 1 + Math.floor(random() * max);
    return [...new Set(Array.from({ length: n }, () => pick(list)))];
  };
  const day = 86_400_000;
  const start = shape.now - 3 * 365 * day;
  const counts: Record<PrincipalType, number> = {
    USER: Math.round(shape.principals * 0.7),
    SERVICE_ACCOUNT: Math.round(shape.principals * 0.15),
    AI_AGENT: Math.round(shape.principals * 0.08),
    API_KEY: 0,
  };
  counts.API_KEY = shape.principals - counts.USER - counts.SERVICE_ACCOUNT - counts.AI_AGENT;

  const principals: SeedPrincipal[] = [];
  const users: string[] = [];
  const levels: string[][] = [[], [], [], [], []];
  let n = 0;
  const nextCreated = (): number => start + Math.floor(random() * (shape.now - start - day));

  // People: level sizes 1, 10, 100, 1000, rest.
  for (let i = 0; i < counts.USER; i += 1) {
    const created = nextCreated();
    const id = seededId('prn', n++, created);
    const level = i === 0 ? 0 : i <= 10 ? 1 : i <= 110 ? 2 : i <= 1110 ? 3 : 4;
    const managerPool = level === 0 ? [] : levels[level - 1]!;
    const first = pick(FIRST);
    const last = pick(LAST);
    const attributes: Attributes = {
      department: pick(DEPARTMENTS),
      team: pick(TEAMS),
      role: level <= 2 ? 'director' : level === 3 ? 'manager' : pick(ROLES),
      location: pick(LOCATIONS),
      language: pick(LANGUAGES),
      employee_type: random() < 0.85 ? 'employee' : 'contractor',
      cost_tier: pick(TIERS),
    };
    if (managerPool.length > 0) attributes['manager_id'] = pick(managerPool);
    if (random() < 0.3) attributes['projects'] = some(PROJECTS, 4);
    if (random() < 0.2) attributes['compliance'] = some(COMPLIANCE, 2);
    const loginRoll = random();
    principals.push({
      id,
      type: 'USER',
      name: `${first} ${last}`,
      email: `${first}.${last}.${i}@example.com`.toLowerCase().replace(/\s+/g, ''),
      attributes,
      metadata: { cost_center: `cc-${Math.floor(random() * 300)}` },
      connectorSource: random() < 0.8 ? 'okta' : 'entra',
      connectorId: `00u${i.toString(36)}`,
      createdAt: new Date(created).toISOString(),
      lastLogin:
        loginRoll < 0.1 ? null : new Date(shape.now - Math.floor(random() * 365 * day)).toISOString(),
    });
    users.push(id);
    levels[level]!.push(id);
  }

  const nonHuman = (
    type: PrincipalType,
    count: number,
    build: (i: number) => { name: string; attributes: Attributes },
  ) => {
    for (let i = 0; i < count; i += 1) {
      const created = nextCreated();
      const { name, attributes } = build(i);
      attributes['environment'] = pick(ENVIRONMENTS);
      attributes['team'] = pick(TEAMS);
      attributes['region'] = pick(REGIONS);
      if (random() < 0.7) attributes['manager_id'] = pick(users);
      principals.push({
        id: seededId('prn', n++, created),
        type,
        name,
        attributes,
        metadata:
          random() < 0.85
            ? {
                owner: `${pick(FIRST).toLowerCase()}@example.com`,
                repository: `git@example.com:${pick(PROJECTS)}.git`,
              }
            : {},
        createdAt: new Date(created).toISOString(),
      });
    }
  };
  nonHuman('SERVICE_ACCOUNT', counts.SERVICE_ACCOUNT, (i) => ({
    name: `svc-${pick(SERVICE_TYPES)}-${i}`,
    attributes: {
      service_type: pick(SERVICE_TYPES),
      project: pick(PROJECTS),
      data_classification: pick(['public', 'internal', 'confidential', 'restricted']),
    },
  }));
  nonHuman('AI_AGENT', counts.AI_AGENT, (i) => ({
    name: `agent-${pick(['support', 'coding', 'research', 'finance', 'sales'])}-${i}`,
    attributes: {
      model: pick(MODELS),
      capabilities: some(CAPABILITIES, 4),
      allowed_tools: random() < 0.05 ? ['*'] : some(TOOLS, 8),
      autonomy: pick(['supervised', 'semi', 'autonomous']),
    },
  }));
  nonHuman('API_KEY', counts.API_KEY, (i) => ({
    name: `key-${pick(PROJECTS)}-${i}`,
    attributes: { scope_level: pick(['read', 'write', 'admin']), rotation: pick(['30d', '90d', 'never']) },
  }));

  // Groups: a forest, 100 roots, each level fanning out, at most four levels deep.
  const groups: SeedGroup[] = [];
  const nesting: SeedMembership[] = [];
  const byLevel: string[][] = [[], [], [], []];
  for (let i = 0; i < shape.groups; i += 1) {
    const created = nextCreated();
    const id = seededId('grp', i, created);
    const level = i < 100 ? 0 : i < 700 ? 1 : i < 2500 ? 2 : 3;
    groups.push({
      id,
      name: `${pick(DEPARTMENTS)}-${pick(['admins', 'readers', 'oncall', 'leads', 'guild', 'project'])}-${i}`,
      createdAt: new Date(created).toISOString(),
    });
    byLevel[level]!.push(id);
    if (level > 0) nesting.push({ groupId: pick(byLevel[level - 1]!), memberId: id });
  }
  const memberships: SeedMembership[] = [];
  for (const p of principals) {
    if (groups.length === 0) break;
    const k = p.type === 'USER' ? 1 + Math.floor(random() * 3) : random() < 0.5 ? 1 : 0;
    const chosen = new Set<string>();
    for (let j = 0; j < k; j += 1) chosen.add(pick(groups).id);
    for (const g of chosen) memberships.push({ groupId: g, memberId: p.id });
  }
  return { principals, groups, memberships, nesting, users, managers: levels[2]! };
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
 * Delegations cover every action and resource, and expire in 30 days.
 */
export function generateDelegations(
  org: Org,
  seed: number,
  now: number,
): { delegations: SeedDelegation[]; chains: DelegationChain[] } {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const agents = org.principals.filter((p) => p.type === 'AI_AGENT').map((p) => p.id);
  const delegations: SeedDelegation[] = [];
  const chains: DelegationChain[] = [];
  const createdAt = new Date(now).toISOString();
  const expiresAt = new Date(now + 30 * 86_400_000).toISOString();
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
