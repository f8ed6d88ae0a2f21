import { ENVIRONMENTS, MODELS, PROJECTS, TEAMS } from './org.js';

/**
 * Searches that each combine their conditions and sort in a way no earlier one did: random
 * operators on random fields and attribute keys, random type and status sets, random sort. The
 * combination is what used to decide the query text (values and key names never entered it), so
 * each search here would have been a text Neo4j had never planned.
 *
 * Every search starts from one selective condition, as real ones do and as the other search
 * scenarios do (a team, a model, two projects, a week of logins or two weeks of creations: a few
 * hundred to about two thousand principals), then adds 1-4 conditions of any kind; a search with
 * no selective condition at all reads every principal however it is compiled.
 */

type Body = { query: Record<string, unknown>; sort: { field: string; order: string }; limit: number };

const OTHER_KEYS = [
  'team',
  'department',
  'environment',
  'location',
  'role',
  'language',
  'cost_tier',
  'projects',
  'compliance',
  'capabilities',
  'model',
  'region',
  'employee_type',
  'x_unused',
];
const TEXT_OPS = ['$ne', '$nin', '$in', '$exists', '$contains', '$startsWith', '$gt', '$lte'];
const FIELD_OPS: Record<string, string[]> = {
  name: ['$ne', '$contains', '$startsWith', '$gt', '$exists'],
  email: ['$ne', '$contains', '$exists', '$nin'],
  connector_source: ['$eq', '$ne', '$in', '$exists'],
  created_at: ['$gt', '$lt', '$exists', '$ne'],
  updated_at: ['$gte', '$lte', '$exists'],
  last_login: ['$gt', '$lt', '$exists'],
  risk_score: ['$gte', '$lt', '$ne', '$in'],
};
const TYPES = ['USER', 'SERVICE_ACCOUNT', 'API_KEY', 'AI_AGENT'];
const STATUSES = ['active', 'suspended', 'deprovisioned'];
const SORTS = ['created_at', 'updated_at', 'name', 'last_login', 'risk_score'];
const WORDS = ['a', 'e', 'an', 'ti', 'pro', 'eng', 'x', 'team-1', 'tier-2', 'okta', 'sec'];

/** Returns a generator of search bodies whose shapes never repeat. */
export function freshSearches(random: () => number, now: number): () => Body {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const subset = <T>(list: readonly T[]): T[] => {
    const chosen = list.filter(() => random() < 0.5);
    return chosen.length > 0 ? chosen : [pick(list)];
  };
  const day = 86_400_000;
  const instant = (): string => new Date(now - Math.floor(random() * 900) * day).toISOString();
  const seen = new Set<string>();

  const operand = (target: string, op: string): unknown => {
    if (op === '$exists') return random() < 0.5;
    if (target === 'created_at' || target === 'updated_at' || target === 'last_login') {
      return op === '$in' || op === '$nin' ? [instant(), instant()] : instant();
    }
    if (target === 'risk_score') {
      const score = Math.floor(random() * 90);
      return op === '$in' ? [score, score + 10] : score;
    }
    if (op === '$in' || op === '$nin') return [pick(WORDS), pick(WORDS)];
    if (op === '$gt' || op === '$lte') return random() < 0.5 ? Math.floor(random() * 10) : pick(WORDS);
    return pick(WORDS);
  };

  const build = (): { body: Body; shape: string } => {
    const query: Record<string, unknown> = {};
    const attributes: Record<string, Record<string, unknown>> = {};
    const anchor = Math.floor(random() * 5);
    if (anchor === 0) attributes['team'] = { $eq: pick(TEAMS) };
    else if (anchor === 1) attributes['project'] = { $in: [pick(PROJECTS), pick(PROJECTS)] };
    else if (anchor === 2) attributes['model'] = { $eq: pick(MODELS) };
    else if (anchor === 3) {
      const from = now - (30 + Math.floor(random() * 300)) * day;
      query['last_login'] = {
        $gte: new Date(from).toISOString(),
        $lt: new Date(from + 7 * day).toISOString(),
      };
    } else {
      const from = now - (60 + Math.floor(random() * 900)) * day;
      query['created_at'] = {
        $gte: new Date(from).toISOString(),
        $lt: new Date(from + 14 * day).toISOString(),
      };
    }
    const extra = 1 + Math.floor(random() * 4);
    for (let i = 0; i < extra; i += 1) {
      if (random() < 0.55) {
        const key = pick(OTHER_KEYS);
        const op = pick(TEXT_OPS);
        attributes[key] = { ...attributes[key], [op]: operand(key, op) };
      } else {
        const name = pick(Object.keys(FIELD_OPS));
        const op = pick(FIELD_OPS[name]!);
        query[name] = { ...(query[name] as object | undefined), [op]: operand(name, op) };
      }
    }
    if (random() < 0.4) query['type'] = subset(TYPES);
    if (random() < 0.3) query['status'] = subset(STATUSES);
    if (random() < 0.2)
      attributes['environment'] = { ...attributes['environment'], $in: subset(ENVIRONMENTS) };
    if (Object.keys(attributes).length > 0) query['attributes'] = attributes;
    const sort = { field: pick(SORTS), order: random() < 0.5 ? 'asc' : 'desc' };
    // What the text used to depend on: the operators per field and per attribute (in key order,
    // keys themselves were parameters), the type and status sets, the sort.
    const ops = (v: unknown) =>
      v !== null && typeof v === 'object' ? Object.keys(v).sort().join('+') : '$eq';
    const shape = JSON.stringify([
      Object.keys(FIELD_OPS).map((f) => ops(query[f])),
      Object.keys(attributes)
        .sort()
        .map((k) => ops(attributes[k])),
      query['type'],
      query['status'],
      sort,
    ]);
    return { body: { query, sort, limit: 50 }, shape };
  };

  return () => {
    for (;;) {
      const { body, shape } = build();
      if (!seen.has(shape)) {
        seen.add(shape);
        return body;
      }
    }
  };
}
