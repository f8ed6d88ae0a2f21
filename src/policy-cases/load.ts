import { Ajv, type AnySchema } from 'ajv';
import { parse } from 'yaml';
import type {
  EngineCase,
  EngineSuite,
  PolicySpec,
  SuiteFile,
  TableSpec,
  World,
  WorldFile,
} from './format.js';

/**
 * Loading a file of policy cases (the format: ./format.ts): the text parsed and checked against
 * its schema, its world added to the shared one it names, its times resolved and its tables
 * expanded into cases. The engine's own cases and the tests of a folder of policies are loaded
 * here alike, so that a case means the same wherever it is written.
 */

/** One case file: its path as shown in errors, and what it holds once checked. */
export interface CaseFile<T> {
  file: string;
  content: T;
}

// One instance for every load: it keeps each schema compiled once.
const ajv = new Ajv({ allErrors: true, strict: true });

/**
 * The text of one case file (named `file` in errors), parsed (YAML, of which JSON is a part) and
 * checked against `schema`. A file that does not parse or does not fit the schema fails with its
 * name and the first problems, so a typo in a case never turns into a case that passes unread.
 */
export function caseFile<T>(file: string, source: string, schema: AnySchema): CaseFile<T> {
  const check = ajv.compile(schema);
  let content: unknown;
  try {
    content = parse(source);
  } catch (err) {
    throw new Error(`${file} does not parse: ${(err as Error).message}`, { cause: err });
  }
  if (!check(content)) {
    const problems = (check.errors ?? [])
      .slice(0, 5)
      // An unknown key is named, so that a misspelt one is found at once.
      .map((e) => {
        const extra =
          e.keyword === 'additionalProperties' ? ` ('${String(e.params['additionalProperty'])}')` : '';
        return `${e.instancePath || '/'} ${e.message ?? ''}${extra}`;
      })
      .join('; ');
    throw new Error(`${file} does not fit its schema: ${problems}`);
  }
  return { file, content: content as T };
}

const UNITS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000 };

/** `now`, `now+30d`, `now-1h`, `now+5m` relative to `now`; anything else (RFC 3339) as written. */
export function resolveTime(value: string, now: number): string {
  const relative = /^now(?:([+-])([0-9]+)([dhm]))?$/.exec(value);
  if (!relative) return value;
  const [, sign, amount, unit] = relative;
  const offset = sign === undefined ? 0 : Number(amount) * UNITS[unit!]! * (sign === '-' ? -1 : 1);
  return new Date(now + offset).toISOString();
}

/**
 * One file's suite, the file already checked against `suiteFileSchema`: its world added to the
 * shared one it names (and to `policies`, those that come from elsewhere: a folder of policies
 * holds its own), its times resolved against `now`, its tables expanded. A file that names a
 * world that does not exist, defines an id twice (its own or its world's), gives two cases the
 * same name, or whose table names a policy it does not hold fails.
 */
export function engineSuite(
  file: string,
  content: SuiteFile,
  worlds: ReadonlyMap<string, WorldFile>,
  now: number,
  policies: readonly PolicySpec[] = [],
): EngineSuite {
  const shared = content.world === undefined ? {} : worlds.get(content.world);
  if (!shared) {
    const known = [...worlds.keys()].sort().join(', ') || 'none';
    throw new Error(`${file}: no world '${content.world}' (the worlds: ${known})`);
  }
  const world: World = {
    principals: [...(shared.principals ?? []), ...(content.principals ?? [])],
    groups: [...(shared.groups ?? []), ...(content.groups ?? [])],
    resources: [...(shared.resources ?? []), ...(content.resources ?? [])],
    policies: [...policies, ...(shared.policies ?? []), ...(content.policies ?? [])].map((p) => ({
      ...p,
      ...(p.valid_from !== undefined ? { valid_from: resolveTime(p.valid_from, now) } : {}),
      ...(p.valid_until !== undefined ? { valid_until: resolveTime(p.valid_until, now) } : {}),
    })),
    delegations: [...(shared.delegations ?? []), ...(content.delegations ?? [])],
  };
  onlyOnce(file, 'principal', world.principals, (p) => p.id);
  onlyOnce(file, 'group', world.groups, (g) => g.id);
  onlyOnce(file, 'resource', world.resources, (r) => r.resource);
  onlyOnce(file, 'policy', world.policies, (p) => p.id);
  const cases = content.cases.flatMap((entry) =>
    'table' in entry ? tableCases(file, world, entry) : [entry],
  );
  onlyOnce(file, 'case name', cases, (c) => c.name);
  return { file, rule: content.rule, world, cases };
}

function onlyOnce<T>(file: string, what: string, items: readonly T[], key: (item: T) => string): void {
  const seen = new Set<string>();
  for (const item of items) {
    const k = key(item);
    if (seen.has(k)) throw new Error(`${file}: ${what} '${k}' is defined twice`);
    seen.add(k);
  }
}

const NO_MATCH = ['NO_MATCHING_POLICY'];

/** Long identifiers in case names: their start, their end and their length. */
const short = (id: string): string =>
  id.length > 24 ? `${id.slice(0, 12)}…${id.slice(-4)} (${id.length} chars)` : id;

type Outcome = 'yes' | 'no' | 'unknown';

/**
 * How the cases of a table are named, by the field it varies and its policy's effect: `{at}` is
 * the resource (or the type), `{row}` the row.
 */
const TITLES: Record<TableSpec['table'], Record<'allow' | 'deny', Record<Outcome, string>>> = {
  context: {
    allow: {
      yes: '{at} holds for {row}',
      no: '{at} does not hold for {row}',
      unknown: '{at} is unknown for {row}',
    },
    deny: {
      yes: '{at} is true for {row}: the deny applies',
      no: '{at} is false for {row}: the deny does not apply',
      unknown: '{at} is unknown for {row}: the deny applies',
    },
  },
  identifier: {
    allow: { yes: '{at}: matches {row}', no: '{at}: does not match {row}', unknown: '' },
    deny: { yes: '{at}: matches {row}', no: '{at}: does not match {row}', unknown: '' },
  },
  action: {
    allow: { yes: '{at}: {row} is granted', no: '{at}: {row} is not', unknown: '' },
    deny: { yes: '{at}: {row} is denied', no: '{at}: {row} is not denied', unknown: '' },
  },
};

/** The cases of a table, `yes` first, then `no`, then `unknown`, each in the order written. */
function tableCases(file: string, world: World, t: TableSpec): EngineCase[] {
  const policy = world.policies.find((p) => p.id === t.policy);
  if (!policy) throw new Error(`${file}: a table names policy '${t.policy}', which the world does not hold`);
  const fallback = t.otherwise === undefined ? undefined : world.policies.find((p) => p.id === t.otherwise);
  if (t.otherwise !== undefined && (fallback?.effect !== 'allow' || policy.effect !== 'deny')) {
    throw new Error(`${file}: a table's otherwise must be an allow of the world, beside a deny`);
  }
  const applies = {
    allowed: policy.effect === 'allow',
    reasons: [`${policy.effect === 'allow' ? 'POLICY_ALLOW' : 'POLICY_DENY'} ${policy.id}`],
  };
  const passes = fallback
    ? { allowed: true, reasons: [`POLICY_ALLOW ${fallback.id}`] }
    : { allowed: false, reasons: NO_MATCH };
  // A policy whose conditions are unknown applies if it denies and not if it allows: fail closed.
  const outcomes = { yes: applies, no: passes, unknown: policy.effect === 'deny' ? applies : passes };
  const out: EngineCase[] = [];
  for (const outcome of ['yes', 'no', 'unknown'] as const) {
    for (const row of t[outcome] ?? []) {
      const title = (at: string, shown: string): string =>
        TITLES[t.table][policy.effect][outcome].replace(/\{(at|row)\}/g, (_, key) =>
          key === 'at' ? at : shown,
        );
      const expected = { principal: t.principal, ...outcomes[outcome] };
      if (t.table === 'context') {
        const context = row as Record<string, unknown>;
        out.push({
          name: title(t.resource!, JSON.stringify(context)),
          resource: t.resource!,
          context,
          ...expected,
        });
      } else if (t.table === 'identifier') {
        const id = row as string;
        out.push({
          name: title(t.type!, JSON.stringify(short(id))),
          resource: `${t.type}:${id}`,
          ...expected,
        });
      } else {
        const action = row as string;
        out.push({ name: title(t.resource!, action), action, resource: t.resource!, ...expected });
      }
    }
  }
  return out;
}
