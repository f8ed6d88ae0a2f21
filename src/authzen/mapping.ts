import type { PolicyIndex } from '../decisions/index.js';
import type { IxPrincipal } from '../decisions/model.js';
import { ACTION_NAME_PATTERN, MAX_IDENTIFIER_LENGTH, RESOURCE_TYPE_PATTERN } from '../policies/patterns.js';
import type {
  AuthZenAction,
  AuthZenContext,
  AuthZenResource,
  AuthZenSubject,
  PartialEntities,
} from '../schemas/authzen.js';
import type { Reason } from '../schemas/decisions.js';
import { PRINCIPAL_TYPES, type PrincipalType } from '../schemas/principals.js';

/**
 * How AuthZEN entities name what the engine knows (API.md §5.8): a subject is a principal, named
 * by id, connector id or email, of a type given in any case (or `principal`: any type); resource
 * `{type, id, properties}` is `{type, identifier, attributes}`; `action.name` is the action.
 */

/** A subject type as a filter: one principal type, any (`principal`), or none at all (unknown type). */
export type TypeFilter = PrincipalType | 'any' | null;

export function typeFilter(type: string): TypeFilter {
  // ASCII only: `toUpperCase` would turn other letters (the long s, `ſ`) into ASCII ones.
  if (!/^[A-Za-z_]{1,32}$/.test(type)) return null;
  const upper = type.toUpperCase();
  if (upper === 'PRINCIPAL') return 'any';
  return (PRINCIPAL_TYPES as readonly string[]).includes(upper) ? (upper as PrincipalType) : null;
}

export function typeFits(filter: TypeFilter, principal: IxPrincipal): boolean {
  return filter === 'any' || filter === principal.type;
}

/** The principal a subject names, or why there is none (a type that does not fit counts as none). */
export function resolveSubject(
  index: PolicyIndex,
  subject: { type: string; id: string },
): { principal: IxPrincipal } | { refusal: Reason } {
  const filter = typeFilter(subject.type);
  if (filter === null) {
    return {
      refusal: {
        code: 'PRINCIPAL_NOT_FOUND',
        message: `subject type ${JSON.stringify(subject.type)} is not a principal type`,
      },
    };
  }
  const principal = index.findPrincipal(subject.id);
  if (!principal) {
    return {
      refusal: {
        code: 'PRINCIPAL_NOT_FOUND',
        message: `no principal has the id, connector id or email ${JSON.stringify(subject.id)}`,
      },
    };
  }
  if (!typeFits(filter, principal)) {
    return {
      refusal: {
        code: 'PRINCIPAL_NOT_FOUND',
        message: `no principal of type ${JSON.stringify(subject.type)} is named ${JSON.stringify(subject.id)}`,
      },
    };
  }
  return { principal };
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
