/**
 * The benchmark's policy set translated for two other engines, casbin (node-casbin) and Cedar
 * (`@cedar-policy/cedar-wasm`), so that the three decide the same requests on equivalent
 * policies. The translation covers what bench/policy-set.ts generates and refuses anything else:
 *
 * - subjects: principal ids and groups (membership through nested groups) — casbin `g` roles
 *   (a policy with several subjects gets a role of its own), Cedar entity parents and
 *   `principal in`; `match` queries of a type (or list of types) and attribute equalities —
 *   casbin request attributes, Cedar `principal.<key>` with `has`;
 * - actions: names, `*`, `family:*` — casbin `keyMatch`, Cedar action groups (`Action::"repo:*"`
 *   is a parent of `Action::"repo:read"`);
 * - resources: exact identifiers and globs — casbin `globMatch`, Cedar `like`;
 * - conditions `context.ip {$cidr}` and `resource.attributes.<key> {$ne}` with the engine's
 *   three-valued logic: an allow applies when the condition is true, a deny unless it is false
 *   (so a missing `ip` lets a conditional deny apply and a conditional allow not);
 * - deny overrides allow, and no applicable allow is a deny (casbin
 *   `some(where (p.eft == allow)) && !some(where (p.eft == deny))`, Cedar forbid/permit);
 * - the AI-agent guardrail (a `tool` outside `allowed_tools` is denied) as one more deny.
 */
// The Node.js build of cedar-wasm (CommonJS, loading its .wasm synchronously).
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { newEnforcer, newModelFromString, type Adapter, type Enforcer, type Model } from 'casbin';
import type { PolicyIndex } from '../src/decisions/policy-index.js';
import type { IxPolicy, IxPrincipal } from '../src/decisions/model.js';
import type { PolicyBody } from '../src/policies/model.js';
import type { BenchRequest } from './policy-set.js';

/** One engine of the comparison: built once, then asked the requests of the stream. */
export interface OtherEngine {
  name: string;
  /** Active policies translated, and lines or statements they became. */
  size: { policies: number; rules: number };
  /** Prepares what a caller of this engine would hold for a request (not timed). */
  prepare(request: BenchRequest): unknown;
  decide(prepared: unknown): boolean;
}

interface MatchSpec {
  types: string[];
  attributes: [string, string][];
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The bodies of the policies translated, by id (the index keeps only their compiled form). */
export type PolicyBodies = ReadonlyMap<string, Pick<PolicyBody, 'subjects' | 'conditions'>>;

function matchSpec(policy: IxPolicy, bodies: PolicyBodies): MatchSpec | null {
  const match = bodies.get(policy.id)?.subjects.match;
  if (!match) return null;
  const { type, attributes, ...rest } = match;
  if (Object.keys(rest).length > 0) throw new Error(`${policy.id}: match beyond type and attributes`);
  const types = type === undefined ? [] : [type].flat().map(String);
  const pairs = Object.entries((attributes ?? {}) as Record<string, unknown>).map(([k, v]) => {
    if (typeof v !== 'string' || !IDENTIFIER.test(k))
      throw new Error(`${policy.id}: match ${k} not a plain equality`);
    return [k, v] as [string, string];
  });
  return { types, attributes: pairs };
}

interface ConditionSpec {
  /** `context.ip` must be in this CIDR. */
  cidr?: string;
  /** `resource.attributes.<key>` must differ from a value. */
  notEqual?: { key: string; value: string };
}

function conditionSpec(policy: IxPolicy, bodies: PolicyBodies): ConditionSpec {
  const out: ConditionSpec = {};
  for (const [path, spec] of Object.entries(bodies.get(policy.id)?.conditions ?? {})) {
    const op = spec as Record<string, unknown>;
    if (path === 'context.ip' && typeof op['$cidr'] === 'string' && Object.keys(op).length === 1) {
      out.cidr = op['$cidr'];
    } else if (
      path.startsWith('resource.attributes.') &&
      typeof op['$ne'] === 'string' &&
      Object.keys(op).length === 1 &&
      IDENTIFIER.test(path.slice(20))
    ) {
      out.notEqual = { key: path.slice(20), value: op['$ne'] };
    } else throw new Error(`${policy.id}: condition ${path} is outside what the translation covers`);
  }
  return out;
}

/** The resource attributes a decision sees: registered ones, those of the request winning. */
function resourceAttributes(index: PolicyIndex, request: BenchRequest): Record<string, unknown> {
  const registered = index.registered(request.resource.type, request.resource.identifier)?.attributes ?? {};
  return { ...registered, ...(request.resource.attributes ?? {}) };
}

// ---- casbin ----------------------------------------------------------------------------------

/**
 * The matcher, cheapest tests first. casbin rewrites ` (...)` groups holding a comma into lists
 * when the matcher uses `in`, so no group here follows a space.
 */
const CASBIN_MATCHER = [
  `r.obj.type == p.typ`,
  `keyMatch(r.act, p.act)`,
  `((p.glob == '0' && r.obj.id == p.obj) || (p.glob == '1' && globMatch(r.obj.id, p.obj)))`,
  `((p.sub != '*' && g(r.sub.id, p.sub)) || (p.sub == '*' && (p.mt == '' || regexMatch(r.sub.type, p.mt))` +
    ` && (p.mk1 == '' || r.sub.attrs[(p.mk1)] == p.mv1) && (p.mk2 == '' || r.sub.attrs[(p.mk2)] == p.mv2)))`,
  `(p.ip == '' || (p.eft == 'allow' && r.ctx.ip != '' && ipMatch(r.ctx.ip, p.ip))` +
    ` || (p.eft == 'deny' && (r.ctx.ip == '' || ipMatch(r.ctx.ip, p.ip))))`,
  `(p.nek == '' || (p.eft == 'allow' && r.obj.attrs[(p.nek)] != null && r.obj.attrs[(p.nek)] != p.nev)` +
    ` || (p.eft == 'deny' && (r.obj.attrs[(p.nek)] == null || r.obj.attrs[(p.nek)] != p.nev)))`,
  `(p.tg == '' || !((r.obj.id in r.sub.tools) || ('*' in r.sub.tools)))`,
]
  .join(' && ')
  .replace(/ \(/g, '(');

const CASBIN_MODEL = `
[request_definition]
r = sub, obj, act, ctx

[policy_definition]
p = sub, typ, obj, glob, act, eft, mt, mk1, mv1, mk2, mv2, ip, nek, nev, tg

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = ${CASBIN_MATCHER}
`;

/** Policy and role lines handed to casbin at load, as an adapter reading a store would. */
class MemoryAdapter implements Adapter {
  constructor(
    private readonly p: string[][],
    private readonly g: string[][],
  ) {}
  async loadPolicy(model: Model): Promise<void> {
    const p = model.model.get('p')!.get('p')!.policy;
    for (const rule of this.p) p.push(rule);
    const g = model.model.get('g')!.get('g')!.policy;
    for (const rule of this.g) g.push(rule);
  }
  async savePolicy(): Promise<boolean> {
    return false;
  }
  async addPolicy(): Promise<void> {}
  async removePolicy(): Promise<void> {}
  async removeFilteredPolicy(): Promise<void> {}
}

const escapeRegex = (text: string): string => text.replace(/[\\^$.|?*+()[\]{}]/g, (c) => `\\${c}`);

export async function buildCasbin(
  index: PolicyIndex,
  policies: readonly IxPolicy[],
  bodies: PolicyBodies,
): Promise<OtherEngine & { enforcer: Enforcer }> {
  const p: string[][] = [];
  const g: string[][] = [];
  for (const principal of index.principals.values())
    for (const group of principal.groups) g.push([principal.id, group]);
  for (const group of index.groups.values()) for (const parent of group.parents) g.push([group.id, parent]);
  let translated = 0;
  for (const policy of policies) {
    if (!policy.active) continue;
    translated += 1;
    const match = matchSpec(policy, bodies);
    const cond = conditionSpec(policy, bodies);
    const ids = [...policy.principals, ...policy.groups];
    const subjects: { sub: string; match: MatchSpec | null }[] = [];
    if (ids.length === 1) subjects.push({ sub: ids[0]!, match: null });
    else if (ids.length > 1) {
      const role = `role:${policy.id}`;
      for (const id of ids) g.push([id, role]);
      subjects.push({ sub: role, match: null });
    }
    if (match) subjects.push({ sub: '*', match });
    for (const s of subjects) {
      const mt = s.match && s.match.types.length > 0 ? `^(${s.match.types.map(escapeRegex).join('|')})$` : '';
      const [a1, a2, extra] = s.match?.attributes ?? [];
      if (extra) throw new Error(`${policy.id}: more than two match attributes`);
      for (const r of policy.resources) {
        for (const action of policy.actions) {
          p.push([
            s.sub,
            r.type,
            r.identifier,
            r.glob ? '1' : '0',
            action,
            policy.effect,
            mt,
            a1?.[0] ?? '',
            a1?.[1] ?? '',
            a2?.[0] ?? '',
            a2?.[1] ?? '',
            cond.cidr ?? '',
            cond.notEqual?.key ?? '',
            cond.notEqual?.value ?? '',
            '',
          ]);
        }
      }
    }
  }
  // The AI-agent guardrail.
  p.push(['*', 'tool', '*', '1', '*', 'deny', '^AI_AGENT$', '', '', '', '', '', '', '', '1']);
  const enforcer = await newEnforcer(newModelFromString(CASBIN_MODEL), new MemoryAdapter(p, g));
  const subjects = new Map<string, unknown>();
  const subjectOf = (principal: IxPrincipal | undefined, id: string): unknown => {
    let s = subjects.get(id);
    if (!s) {
      const tools = principal?.attributes['allowed_tools'];
      s = {
        id,
        type: principal?.type ?? '',
        attrs: principal?.attributes ?? {},
        tools: tools === undefined ? [] : [tools].flat(),
      };
      subjects.set(id, s);
    }
    return s;
  };
  return {
    name: 'casbin',
    enforcer,
    size: { policies: translated, rules: p.length + g.length },
    prepare: (request) => [
      subjectOf(index.principals.get(request.principal_id), request.principal_id),
      {
        type: request.resource.type,
        id: request.resource.identifier,
        attrs: resourceAttributes(index, request),
      },
      request.action,
      { ip: request.context?.ip ?? '' },
    ],
    decide: (prepared) => enforcer.enforceSync(...(prepared as unknown[])),
  };
}

// ---- Cedar -----------------------------------------------------------------------------------

const str = (text: string): string => JSON.stringify(text);
const likePattern = (glob: string): string =>
  `"${glob
    .split('*')
    .map((part) => part.replace(/\\/g, '\\\\').replace(/"/g, '\\"'))
    .join('*')}"`;
const principalUid = (id: string): string => `Principal::${str(id)}`;
const groupUid = (id: string): string => `Group::${str(id)}`;
const resourceId = (type: string, identifier: string): string => `${type}:${identifier}`;
const resourceUid = (type: string, identifier: string): string =>
  `Resource::${str(resourceId(type, identifier))}`;

function cedarPolicy(policy: IxPolicy, bodies: PolicyBodies): string {
  const match = matchSpec(policy, bodies);
  const cond = conditionSpec(policy, bodies);
  const clauses: string[] = [];
  const ids = [...[...policy.principals].map(principalUid), ...policy.groups.map(groupUid)];
  let principal = 'principal';
  if (!match && ids.length === 1) {
    principal = policy.principals.size === 1 ? `principal == ${ids[0]}` : `principal in ${ids[0]}`;
  } else {
    const parts: string[] = [];
    if (ids.length > 0) parts.push(`principal in [${ids.join(', ')}]`);
    if (match) {
      const tests: string[] = [];
      if (match.types.length === 1) tests.push(`principal.type == ${str(match.types[0]!)}`);
      else if (match.types.length > 1)
        tests.push(`[${match.types.map(str).join(', ')}].contains(principal.type)`);
      for (const [k, v] of match.attributes) tests.push(`principal has ${k} && principal.${k} == ${str(v)}`);
      parts.push(tests.length > 0 ? `(${tests.join(' && ')})` : 'true');
    }
    clauses.push(parts.join(' || '));
  }
  const action = policy.actions.includes('*')
    ? 'action'
    : `action in [${policy.actions.map((a) => `Action::${str(a)}`).join(', ')}]`;
  let resource = 'resource';
  const exact = policy.resources.filter((r) => !r.glob);
  const globs = policy.resources.filter((r) => r.glob);
  if (exact.length === 1 && globs.length === 0)
    resource = `resource == ${resourceUid(exact[0]!.type, exact[0]!.identifier)}`;
  else {
    const parts: string[] = [];
    if (exact.length > 0)
      parts.push(`resource in [${exact.map((r) => resourceUid(r.type, r.identifier)).join(', ')}]`);
    for (const r of globs)
      parts.push(
        `(resource.type == ${str(r.type)} && resource.identifier like ${likePattern(r.identifier)})`,
      );
    clauses.push(parts.join(' || '));
  }
  const allow = policy.effect === 'allow';
  if (cond.cidr) {
    const inRange = `ip(context.ip).isInRange(ip(${str(cond.cidr)}))`;
    clauses.push(allow ? `context has ip && ${inRange}` : `!(context has ip) || ${inRange}`);
  }
  if (cond.notEqual) {
    const { key, value } = cond.notEqual;
    const differs = `resource.${key} != ${str(value)}`;
    clauses.push(allow ? `resource has ${key} && ${differs}` : `!(resource has ${key}) || ${differs}`);
  }
  const when = clauses.map((c) => ` when { ${c} }`).join('');
  return `@id(${str(policy.id)})\n${allow ? 'permit' : 'forbid'} (${principal}, ${action}, ${resource})${when};`;
}

const GUARDRAIL = `@id("tool-guardrail")
forbid (principal, action, resource) when { resource.type == "tool" && principal.type == "AI_AGENT"
  && !(principal has allowed_tools && (principal.allowed_tools.contains("*") || principal.allowed_tools.contains(resource.identifier))) };`;

type CedarEntity = {
  uid: { type: string; id: string };
  attrs: Record<string, unknown>;
  parents: { type: string; id: string }[];
};

let cedarSets = 0;

export function buildCedar(
  index: PolicyIndex,
  policies: readonly IxPolicy[],
  bodies: PolicyBodies,
): OtherEngine & { text: string } {
  const active = policies.filter((p) => p.active);
  const text = [...active.map((p) => cedarPolicy(p, bodies)), GUARDRAIL].join('\n');
  const id = `bench-${(cedarSets += 1)}`;
  const parsed = cedar.preparsePolicySet(id, { staticPolicies: text });
  if (parsed.type !== 'success')
    throw new Error(`Cedar refused the policies: ${JSON.stringify(parsed.errors.slice(0, 3))}`);
  // Action groups: every `family:*` pattern is a parent of the actions it covers.
  const families = [...new Set(active.flatMap((p) => p.actions).filter((a) => a.endsWith('*') && a !== '*'))];
  const actionEntity = (action: string): CedarEntity => ({
    uid: { type: 'Action', id: action },
    attrs: {},
    parents: families
      .filter((f) => action.startsWith(f.slice(0, -1)))
      .map((f) => ({ type: 'Action', id: f })),
  });
  // What a caller keeps per principal: its entity and those of every group above it.
  const slices = new Map<string, CedarEntity[]>();
  const principalSlice = (principalId: string): CedarEntity[] => {
    let slice = slices.get(principalId);
    if (slice) return slice;
    const p = index.principals.get(principalId);
    slice = [];
    if (p) {
      slice.push({
        uid: { type: 'Principal', id: p.id },
        attrs: { ...p.attributes, type: p.type },
        parents: p.groups.map((g) => ({ type: 'Group', id: g })),
      });
      for (const g of index.groupsOf(p)) {
        slice.push({
          uid: { type: 'Group', id: g },
          attrs: {},
          parents: [...(index.groups.get(g)?.parents ?? [])].map((parent) => ({ type: 'Group', id: parent })),
        });
      }
    }
    slices.set(principalId, slice);
    return slice;
  };
  return {
    name: 'cedar-wasm',
    text,
    size: { policies: active.length, rules: active.length + 1 },
    prepare: (request) => {
      const { type, identifier } = request.resource;
      return {
        principal: { type: 'Principal', id: request.principal_id },
        action: { type: 'Action', id: request.action },
        resource: { type: 'Resource', id: resourceId(type, identifier) },
        context: request.context ?? {},
        preparsedPolicySetId: id,
        entities: [
          ...principalSlice(request.principal_id),
          actionEntity(request.action),
          {
            uid: { type: 'Resource', id: resourceId(type, identifier) },
            attrs: { ...resourceAttributes(index, request), type, identifier },
            parents: [],
          },
        ],
      };
    },
    decide: (prepared) => {
      const answer = cedar.statefulIsAuthorized(prepared as cedar.StatefulAuthorizationCall);
      if (answer.type !== 'success')
        throw new Error(`Cedar failed: ${JSON.stringify(answer.errors.slice(0, 2))}`);
      return answer.response.decision === 'allow';
    },
  };
}

export const cedarVersion = (): string => cedar.getCedarVersion();
