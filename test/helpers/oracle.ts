import type { TestApp } from './app.js';

/**
 * A deliberately simple decision oracle: it answers ONE access request (docs/api.md §5.2) straight from
 * the graph in Neo4j, with its own Cypher and its own plain evaluation of patterns, `match`
 * subjects and conditions. It shares no code with the engine (src/decisions, src/policies,
 * src/principals/search): it reads the policy as it is stored — the body the API shows, one
 * property per part — and the principal node as it is stored, and applies the contract to them.
 *
 * - Subjects by id and by group come from the policy's stored `subject_principals` and
 *   `subject_groups` (what GET /v1/policies/{id} shows), membership from `MEMBER_OF*1..16` paths.
 *   The `APPLIES_TO` edges the access traversal walks are read too, and any policy whose edges say
 *   otherwise about the principal is reported (`edgeDisagreements`).
 * - `match` subjects are evaluated here, by a plain reading of §2 over the principal node's own
 *   properties. Neither alternative is independent: the service's principal search and
 *   test/helpers/query-reference.ts both go through `toQuery` (src/principals/search/service.ts), which
 *   the index's compiled predicate uses as well, and the latter also through the engine's
 *   `fromProperties`; a mistake there would be shared by the index and the oracle and go unseen.
 * - Globs become regular expressions here, actions and conditions are matched and evaluated
 *   here (§5.2's three values: a missing path or a wrong type is unknown; an allow applies only
 *   when its conditions are true, a deny unless they are false).
 *
 * It is slow on purpose (one statement per request, every active policy of the resource type read
 * and checked in turn) and covers the subset of the language the property tests generate; anything
 * outside it throws rather than answering something the contract does not say.
 */

export interface OracleRequest {
  principal_id: string;
  /** A name, or a name with the properties the caller claims. */
  action: string | { name: string; properties?: Record<string, unknown> | undefined };
  resource: { type: string; identifier: string; attributes?: Record<string, unknown> | undefined };
  context?: Record<string, unknown> | undefined;
  subject_properties?: Record<string, unknown> | undefined;
}

const nameOf = (action: OracleRequest['action']): string =>
  typeof action === 'string' ? action : action.name;

/** Why a request is denied; several may hold at once (the contract does not rank them). */
export type DenyCause =
  'PRINCIPAL_NOT_FOUND' | 'PRINCIPAL_INACTIVE' | 'TOOL_NOT_ALLOWED' | 'POLICY_DENY' | 'NO_MATCHING_POLICY';

export interface OracleAnswer {
  decision: 'ALLOW' | 'DENY';
  /** Active allow policies that apply to the request (sorted), whatever the decision. */
  allowedBy: string[];
  /** Active deny policies that apply to the request (sorted). */
  deniedBy: string[];
  /** Every reason for a DENY; empty for an ALLOW. */
  causes: DenyCause[];
  /**
   * Active policies covering the request's resource whose APPLIES_TO edges say something else
   * than their stored subjects about this principal (the edges are what the access traversal
   * walks): none, if the graph is consistent.
   */
  edgeDisagreements: string[];
  /** Whether the resource is registered (§5.7), which decides whether globs list it. */
  registered: boolean;
  /**
   * Whether the AI-agent tool guardrail limits this principal on this resource: an agent asking
   * for a `tool`, without `*` among its `allowed_tools`.
   */
  toolGuarded: boolean;
}

type Tri = 'true' | 'false' | 'unknown';
type Props = Record<string, unknown>;

interface Row {
  principal: Props | null;
  groups: string[];
  resource: Props | null;
  policies: { props: Props; by_edge: boolean }[];
}

const STATEMENT = {
  name: 'test/oracle_request',
  text: `
OPTIONAL MATCH (p:Principal {id: $principal})
CALL (p) {
  OPTIONAL MATCH (p)-[:MEMBER_OF*1..16]->(g:Group)
  RETURN collect(DISTINCT g.id) AS groups
}
CALL () {
  OPTIONAL MATCH (r:Resource {type: $type, identifier: $identifier})
  WHERE r.registered = true
  RETURN properties(r) AS resource
}
CALL (p) {
  MATCH (pol:Policy)
  WHERE pol.status = 'active' AND any(text IN pol.resources WHERE text STARTS WITH $type + ':')
  RETURN collect({
    props: properties(pol),
    by_edge: p IS NOT NULL AND (
      EXISTS { (pol)-[:APPLIES_TO]->(p) } OR
      EXISTS { (pol)-[:APPLIES_TO]->(:Group)<-[:MEMBER_OF*1..16]-(p) }
    )
  }) AS policies
}
RETURN properties(p) AS principal, groups, resource, policies`,
};

/** Answers one request from the graph as it is now. */
export async function oracleDecide(app: TestApp, request: OracleRequest): Promise<OracleAnswer> {
  const [row] = await app.runtime.db.run<Row>(STATEMENT, {
    principal: request.principal_id,
    type: request.resource.type,
    identifier: request.resource.identifier,
  });
  if (!row) throw new Error('the oracle statement returned no row');
  return decideFrom(row, request);
}

function decideFrom(row: Row, request: OracleRequest): OracleAnswer {
  const p = row.principal;
  const guarded =
    p !== null && p['type'] === 'AI_AGENT' && request.resource.type === 'tool' && !toolList(p).includes('*');
  const answer = (
    causes: DenyCause[],
    allowedBy: string[] = [],
    deniedBy: string[] = [],
    edges: string[] = [],
  ) => ({
    decision: causes.length === 0 ? ('ALLOW' as const) : ('DENY' as const),
    allowedBy: allowedBy.sort(),
    deniedBy: deniedBy.sort(),
    causes,
    edgeDisagreements: edges.sort(),
    registered: row.resource !== null,
    toolGuarded: guarded,
  });
  if (p === null) return answer(['PRINCIPAL_NOT_FOUND']);
  if (p['status'] !== 'active') return answer(['PRINCIPAL_INACTIVE']);

  const allowedBy: string[] = [];
  const deniedBy: string[] = [];
  const edges: string[] = [];
  for (const { props: pol, by_edge: byEdge } of row.policies) {
    const id = pol['id'] as string;
    if (!coversResource(pol, request.resource.type, request.resource.identifier)) continue;
    const byList =
      (pol['subject_principals'] as string[] | null)?.includes(p['id'] as string) === true ||
      ((pol['subject_groups'] as string[] | null) ?? []).some((g) => row.groups.includes(g));
    if (byList !== byEdge) edges.push(id);
    const byMatch = typeof pol['match'] === 'string' && matchSelects(JSON.parse(pol['match']) as Props, p);
    if (!byList && !byMatch) continue;
    if (!(pol['actions'] as string[]).some((a) => actionMatches(a, nameOf(request.action)))) continue;
    const outcome =
      typeof pol['conditions'] === 'string'
        ? conditionsHold(JSON.parse(pol['conditions']) as Props, {
            principal: p,
            resource: request.resource,
            registered: row.resource,
            context: request.context,
            action: request.action,
            subjectProperties: request.subject_properties,
          })
        : 'true';
    if (pol['effect'] === 'allow' && outcome === 'true') allowedBy.push(id);
    if (pol['effect'] === 'deny' && outcome !== 'false') deniedBy.push(id);
  }

  const causes: DenyCause[] = [];
  if (!toolAllowed(p, request.resource.type, request.resource.identifier)) causes.push('TOOL_NOT_ALLOWED');
  if (deniedBy.length > 0) causes.push('POLICY_DENY');
  if (allowedBy.length === 0) causes.push('NO_MATCHING_POLICY');
  return answer(causes, allowedBy, deniedBy, edges);
}

// ---- patterns ----

/** `*` is any action; `prefix*` any action starting with the prefix; anything else itself. */
export function actionMatches(pattern: string, action: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return action.startsWith(pattern.slice(0, -1));
  return pattern === action;
}

/** An identifier glob as an anchored regular expression: `*` is any run of characters. */
export function globRegExp(glob: string): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  return new RegExp(`^${glob.split('*').map(literal).join('.*')}$`, 's');
}

/** Whether a stored policy (`resources` as `type:identifier` texts) names this resource. */
function coversResource(pol: Props, type: string, identifier: string): boolean {
  return (pol['resources'] as string[]).some((text) => {
    const colon = text.indexOf(':');
    if (text.slice(0, colon) !== type) return false;
    const pattern = text.slice(colon + 1);
    return pattern.includes('*') ? globRegExp(pattern).test(identifier) : pattern === identifier;
  });
}

/** The AI-agent guardrail: a `tool` must be in the agent's `allowed_tools`, or those hold `*`. */
function toolAllowed(p: Props, type: string, identifier: string): boolean {
  if (p['type'] !== 'AI_AGENT' || type !== 'tool') return true;
  const list = toolList(p);
  return list.includes('*') || list.includes(identifier);
}

function toolList(p: Props): unknown[] {
  const tools = p['attr.allowed_tools'];
  return tools === undefined || tools === null ? [] : Array.isArray(tools) ? tools : [tools];
}

// ---- match subjects: the search language of §2 on the stored principal ----

const SEARCH_KEYS = new Set(['type', 'status', 'attributes']);

/**
 * §2: type and status as a value or a list (any of them), deleted principals left out unless the
 * status names them; attribute conditions as a plain value or `$eq`/`$ne`/`$in`/`$nin`/`$exists`,
 * an array attribute holding when an element does, and a missing one matching only `$ne`, `$nin`
 * and `$exists: false`.
 */
export function matchSelects(match: Props, p: Props): boolean {
  for (const key of Object.keys(match)) {
    if (!SEARCH_KEYS.has(key)) throw new Error(`oracle: match field ${key} is outside its subset`);
  }
  const anyOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);
  if (match['type'] !== undefined && !anyOf(match['type']).includes(p['type'])) return false;
  if (
    match['status'] === undefined ? p['status'] === 'deleted' : !anyOf(match['status']).includes(p['status'])
  )
    return false;
  for (const [key, spec] of Object.entries((match['attributes'] as Props | undefined) ?? {})) {
    const raw = p[`attr.${key}`];
    const present = raw !== undefined && raw !== null;
    const elements: unknown[] = !present ? [] : Array.isArray(raw) ? raw : [raw];
    const ops: [string, unknown][] =
      spec !== null && typeof spec === 'object' && !Array.isArray(spec)
        ? Object.entries(spec)
        : [['$eq', spec]];
    for (const [op, operand] of ops) {
      let holds: boolean;
      if (op === '$eq') holds = elements.includes(operand);
      else if (op === '$ne') holds = !elements.includes(operand);
      else if (op === '$in') holds = elements.some((e) => (operand as unknown[]).includes(e));
      else if (op === '$nin') holds = !elements.some((e) => (operand as unknown[]).includes(e));
      else if (op === '$exists') holds = present === operand;
      else throw new Error(`oracle: match operator ${op} is outside its subset`);
      if (!holds) return false;
    }
  }
  return true;
}

// ---- conditions: §5.1 paths and operators, §5.2's three-valued rule ----

interface ConditionInput {
  principal: Props;
  resource: OracleRequest['resource'];
  registered: Props | null;
  context: Record<string, unknown> | undefined;
  action: OracleRequest['action'];
  subjectProperties: Record<string, unknown> | undefined;
}

const and = (results: Tri[]): Tri =>
  results.includes('false') ? 'false' : results.includes('unknown') ? 'unknown' : 'true';
const or = (results: Tri[]): Tri =>
  results.includes('true') ? 'true' : results.includes('unknown') ? 'unknown' : 'false';
const not = (t: Tri): Tri => (t === 'true' ? 'false' : t === 'false' ? 'true' : 'unknown');
const tri = (b: boolean): Tri => (b ? 'true' : 'false');

const PRINCIPAL_FIELDS = [
  'id',
  'type',
  'status',
  'name',
  'email',
  'connector_source',
  'connector_id',
  'risk_score',
];

/** The value at a path, undefined when missing. */
function read(path: string, input: ConditionInput): unknown {
  const [root, ...rest] = path.split('.');
  const tail = rest.join('.');
  if (root === 'principal') {
    if (PRINCIPAL_FIELDS.includes(tail)) return input.principal[tail] ?? undefined;
    if (tail.startsWith('attributes.')) return input.principal[`attr.${tail.slice(11)}`] ?? undefined;
    if (tail.startsWith('metadata.')) return input.principal[`meta.${tail.slice(9)}`] ?? undefined;
  } else if (root === 'resource') {
    if (tail === 'type') return input.resource.type;
    if (tail === 'identifier') return input.resource.identifier;
    if (tail.startsWith('attributes.')) {
      const key = tail.slice(11);
      // The request's attributes win over the registered resource's.
      const requested = input.resource.attributes?.[key];
      if (requested !== undefined && requested !== null) return requested;
      return input.registered?.[`attr.${key}`] ?? undefined;
    }
  } else if (root === 'context') {
    return dig(input.context, rest);
  } else if (root === 'action') {
    // §5.1: the action's name and the properties the request claims for it.
    if (tail === 'name') return nameOf(input.action);
    if (rest[0] === 'properties' && rest.length > 1) {
      return dig(typeof input.action === 'string' ? undefined : input.action.properties, rest.slice(1));
    }
  } else if (root === 'subject') {
    // Claims about the subject: what the request says, never the stored principal.
    if (rest[0] === 'properties' && rest.length > 1) return dig(input.subjectProperties, rest.slice(1));
  }
  throw new Error(`oracle: condition path ${path} is outside its subset`);
}

/** A value in nested objects, one path segment per level; undefined when a level is missing. */
function dig(root: unknown, segments: string[]): unknown {
  let value = root;
  for (const segment of segments) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value ?? undefined;
}

const isRef = (v: unknown): v is { $ref: string } =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && '$ref' in v;

/** Every entry must hold: false if one is false, else unknown if one is unknown. */
export function conditionsHold(conditions: Props, input: ConditionInput): Tri {
  return and(
    Object.entries(conditions).map(([path, spec]) => {
      const ops: [string, unknown][] =
        spec !== null && typeof spec === 'object' && !Array.isArray(spec) && !isRef(spec)
          ? Object.entries(spec)
          : [['$eq', spec]];
      const value = read(path, input);
      return and(ops.map(([op, operand]) => test(op, operand, value, input)));
    }),
  );
}

/** Equality of two scalars of the same type; anything else is a wrong type, so unknown. */
function equal(a: unknown, b: unknown): Tri {
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  if (!scalar(a) || typeof a !== typeof b) return 'unknown';
  return tri(a === b);
}

/** A number, or text that is one (§2: a number operand compares numerically); else undefined. */
function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  return undefined;
}

function ipv4(text: string): number | undefined {
  if (text.includes(':')) throw new Error('oracle: IPv6 is outside its subset');
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((x) => /^(0|[1-9]\d{0,2})$/.test(x) && Number(x) <= 255))
    return undefined;
  return parts.reduce((n, x) => n * 256 + Number(x), 0);
}

function inCidr(ip: number, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const prefix = Number(bits);
  const size = 2 ** (32 - prefix);
  return Math.floor(ip / size) === Math.floor(ipv4(base!)! / size);
}

function test(op: string, rawOperand: unknown, value: unknown, input: ConditionInput): Tri {
  if (op === '$exists') return tri((value !== undefined) === rawOperand);
  if (value === undefined) return 'unknown';
  let operand = rawOperand;
  if (isRef(rawOperand)) {
    operand = read(rawOperand.$ref, input);
    if (operand === undefined) return 'unknown';
    if (Array.isArray(operand)) throw new Error('oracle: a $ref to a list is outside its subset');
  }
  // A list value holds when one of its elements does.
  const elements = Array.isArray(value) ? value : [value];
  const some = (check: (e: unknown) => Tri): Tri => or(elements.map(check));
  switch (op) {
    case '$eq':
      return some((e) => equal(e, operand));
    case '$ne':
      return not(some((e) => equal(e, operand)));
    case '$in':
      return some((e) => or((operand as unknown[]).map((o) => equal(e, o))));
    case '$nin':
      return not(some((e) => or((operand as unknown[]).map((o) => equal(e, o)))));
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      if (typeof operand !== 'number') throw new Error('oracle: text comparisons are outside its subset');
      return some((e) => {
        const n = asNumber(e);
        if (n === undefined) return 'unknown';
        return tri(
          op === '$gt'
            ? n > operand
            : op === '$gte'
              ? n >= operand
              : op === '$lt'
                ? n < operand
                : n <= operand,
        );
      });
    }
    case '$cidr': {
      const blocks = (Array.isArray(operand) ? operand : [operand]) as string[];
      return some((e) => {
        const ip = typeof e === 'string' ? ipv4(e) : undefined;
        if (ip === undefined) return 'unknown';
        return tri(blocks.some((b) => inCidr(ip, b)));
      });
    }
    default:
      throw new Error(`oracle: condition operator ${op} is outside its subset`);
  }
}
