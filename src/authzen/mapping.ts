import type { PolicyIndex } from '../decisions/policy-index.js';
import type { IxPrincipal } from '../decisions/model.js';
import type {
  AuthZenAction,
  AuthZenContext,
  AuthZenResource,
  AuthZenSubject,
  PartialEntities,
} from '../schemas/authzen.js';
import type { Reason } from '../schemas/decisions.js';
import { ACTION_NAME_PATTERN, MAX_IDENTIFIER_LENGTH, RESOURCE_TYPE_PATTERN } from '../vocabulary/policies.js';
import { PRINCIPAL_TYPES, type PrincipalType } from '../vocabulary/principals.js';

/**
 * How AuthZEN entities name what the engine knows (docs/api.md §5.8): a subject is a principal, named
 * by id, connector id or email, of a type given in any case (or `principal` / `identity`: any
 * type); resource `{type, id, properties}` is `{type, identifier, attributes}`; `action.name` is
 * the action. Subject and action `properties` reach conditions as claims.
 */

/** A subject type as a filter: one principal type, any (`principal`), or none at all (unknown type). */
export type TypeFilter = PrincipalType | 'any' | null;

export function typeFilter(type: string): TypeFilter {
  // ASCII only: `toUpperCase` would turn other letters (the long s, `ſ`) into ASCII ones.
  if (!/^[A-Za-z_]{1,32}$/.test(type)) return null;
  const upper = type.toUpperCase();
  if (upper === 'PRINCIPAL' || upper === 'IDENTITY') return 'any';
  return (PRINCIPAL_TYPES as readonly string[]).includes(upper) ? (upper as PrincipalType) : null;
}

export function typeFits(filter: TypeFilter, principal: IxPrincipal): boolean {
  return filter === 'any' || filter === principal.type;
}

/**
 * The id a principal has in AuthZEN: the one its identity connector gives it when it has one, so
 * that a caller gets back the identifiers it sends; else its principal id.
 */
export const authzenId = (p: IxPrincipal): string => p.connector_id ?? p.id;

/**
 * Where a subject's principal must come from: any source (undefined), the principals of one
 * connector (its `connector_source`), or nowhere (null: `properties.connector` names none).
 */
export type SourceScope = string | null | undefined;

const notFound = (message: string): { refusal: Reason } => ({
  refusal: { code: 'PRINCIPAL_NOT_FOUND', message },
});

const ambiguous = (message: string): { refusal: Reason } => ({
  refusal: { code: 'AMBIGUOUS_SUBJECT', message },
});

/**
 * The principal a subject names, or why there is none. An id names its principal. Otherwise the
 * connector ids and emails (any case) that hold the reference name the candidates, of the type
 * asked and in the scope given: if they come from more than one source (connectors, or the API
 * for principals made through it) the subject is ambiguous, so that no connector can make a
 * subject resolve to its own principal instead of another's, whichever it names. Within one
 * source, a connector id comes before an email, and several principals still left (users of one
 * connector sharing an email) are ambiguous too.
 */
export function resolveSubject(
  index: PolicyIndex,
  subject: { type: string; id: string },
  scope?: SourceScope,
): { principal: IxPrincipal } | { refusal: Reason } {
  const filter = typeFilter(subject.type);
  const named = JSON.stringify(subject.id);
  if (filter === null) {
    return notFound(`subject type ${JSON.stringify(subject.type)} is not a principal type`);
  }
  if (scope === null) return notFound('subject.properties.connector names no connector');
  const fits = (p: IxPrincipal): boolean =>
    typeFits(filter, p) && (scope === undefined || p.connector_source === scope);
  const byId = index.principalView(subject.id);
  if (byId) {
    if (!typeFits(filter, byId))
      return notFound(`no principal of type ${JSON.stringify(subject.type)} is named ${named}`);
    if (!fits(byId))
      return notFound(`principal ${named} does not come from connector ${JSON.stringify(scope)}`);
    return { principal: byId };
  }
  const { byConnectorId, byEmail } = index.principalsNamed(subject.id);
  const viaConnectorId = byConnectorId.filter(fits);
  const viaEmail = byEmail.filter(fits);
  const candidates = new Set([...viaConnectorId, ...viaEmail]);
  if (candidates.size === 0) {
    return notFound(
      scope === undefined
        ? `no principal of type ${JSON.stringify(subject.type)} has the id, connector id or email ${named}`
        : `no principal of type ${JSON.stringify(subject.type)} from connector ${JSON.stringify(scope)} has the connector id or email ${named}`,
    );
  }
  const sources = new Set([...candidates].map((p) => p.connector_source));
  if (sources.size > 1) {
    return ambiguous(
      `${named} names principals of ${sources.size} sources: name the connector in subject.properties.connector, or send the principal id`,
    );
  }
  const chosen = viaConnectorId.length > 0 ? viaConnectorId : viaEmail;
  if (chosen.length > 1) {
    return ambiguous(
      `${named} is the ${viaConnectorId.length > 0 ? 'connector id' : 'email'} of ${chosen.length} principals: send the principal id`,
    );
  }
  return { principal: chosen[0]! };
}

/**
 * The principal `context.agent` names (§5.8, §10): an agent acting for the subject, as an MCP
 * gateway names it from the token's `client_id`. A principal id names its principal; otherwise a
 * connector id, else an AI agent's `attributes.client_id`, each only when exactly one principal
 * holds it: a reference two principals share names neither of them.
 */
export function resolveAgent(
  index: PolicyIndex,
  ref: string,
): { principal: IxPrincipal } | { refusal: Reason } {
  const named = JSON.stringify(ref);
  const byId = index.principalView(ref);
  if (byId) return { principal: byId };
  const { byConnectorId } = index.principalsNamed(ref);
  const candidates = byConnectorId.length > 0 ? byConnectorId : index.agentsWithClientId(ref);
  if (candidates.length === 1) return { principal: candidates[0]! };
  if (candidates.length === 0) {
    return notFound(
      `context.agent ${named} names no principal: no principal id, connector id or AI agent client_id is ${named}`,
    );
  }
  return ambiguous(
    `context.agent ${named} is the ${byConnectorId.length > 0 ? 'connector id' : 'client_id'} of ${candidates.length} principals: send the agent's principal id`,
  );
}

const RESOURCE_TYPE = new RegExp(RESOURCE_TYPE_PATTERN);
const ACTION_NAME = new RegExp(ACTION_NAME_PATTERN);

export const isResourceType = (type: string): boolean => RESOURCE_TYPE.test(type);
export const isIdentifier = (id: string): boolean => id.length >= 1 && id.length <= MAX_IDENTIFIER_LENGTH;
export const isActionName = (name: string): boolean => ACTION_NAME.test(name);

/**
 * Why a request names what no policy can grant, if it does: a resource type, identifier or action
 * outside what policies are written with. Such a request is denied, not refused (§5.8): a
 * wildcard policy (`*`) must not reach an action no policy could name.
 */
export function outsideVocabulary(
  action: string,
  resource: { type: string; id: string },
): Reason | undefined {
  const problem = !isResourceType(resource.type)
    ? `resource type ${JSON.stringify(resource.type)} is not one policies can name (${RESOURCE_TYPE_PATTERN})`
    : !isIdentifier(resource.id)
      ? `a resource identifier has 1-${MAX_IDENTIFIER_LENGTH} characters`
      : !isActionName(action)
        ? `action ${JSON.stringify(action)} is not one policies can name (${ACTION_NAME_PATTERN})`
        : undefined;
  return problem === undefined ? undefined : { code: 'NO_MATCHING_POLICY', message: problem };
}

/** An evaluation with every required member. */
export interface Evaluation {
  subject: AuthZenSubject;
  action: AuthZenAction;
  resource: AuthZenResource;
  context?: AuthZenContext | undefined;
}

/**
 * One evaluation of a batch with the batch's defaults applied (§7.1.1 of the standard): a member
 * the evaluation gives replaces the default as a whole, except that a required field it leaves
 * out (`type`, `id`, `name`) comes from the default. A string says what is still missing.
 */
export function withDefaults(defaults: PartialEntities, item: PartialEntities): Evaluation | string {
  const subject = merge(defaults.subject, item.subject);
  const action = merge(defaults.action, item.action);
  const resource = merge(defaults.resource, item.resource);
  const missing = [
    ...missingOf('subject', subject, ['type', 'id']),
    ...missingOf('action', action, ['name']),
    ...missingOf('resource', resource, ['type', 'id']),
  ];
  if (missing.length > 0) return `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required`;
  const context = item.context ?? defaults.context;
  return {
    subject: subject as AuthZenSubject,
    action: action as AuthZenAction,
    resource: resource as AuthZenResource,
    ...(context !== undefined ? { context } : {}),
  };
}

type Entity = { properties?: Record<string, unknown> | undefined } & Record<string, unknown>;

function merge<T extends Entity>(base: T | undefined, own: T | undefined): T | undefined {
  if (own === undefined) return base;
  if (base === undefined) return own;
  const out: Record<string, unknown> = {};
  for (const key of ['type', 'id', 'name'] as const) {
    const value = own[key] ?? base[key];
    if (value !== undefined) out[key] = value;
  }
  if (own.properties !== undefined) out['properties'] = own.properties;
  return out as T;
}

function missingOf(name: string, entity: Record<string, unknown> | undefined, fields: string[]): string[] {
  if (entity === undefined) return [name];
  return fields.filter((f) => typeof entity[f] !== 'string').map((f) => `${name}.${f}`);
}
