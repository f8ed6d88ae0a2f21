import {
  accessEntries,
  entryFor,
  grantCovers,
  toolFilter,
  type Candidate,
  type Grant,
} from '../decisions/access.js';
import { grantsOf, registeredMatching, type AccessService } from '../decisions/access-service.js';
import { decide } from '../decisions/engine.js';
import type { PolicyIndex } from '../decisions/index.js';
import type { IxPrincipal } from '../decisions/model.js';
import type { DecisionService } from '../decisions/service.js';
import { validationFailed } from '../errors/errors.js';
import { actionCovers } from '../policies/patterns.js';
import type {
  ActionSearchRequest,
  AuthZenContext,
  AuthZenDecision,
  EvaluationRequest,
  EvaluationsRequest,
  EvaluationsResponse,
  FoundAction,
  FoundResource,
  FoundSubject,
  Metadata,
  ResourceSearchRequest,
  SearchPage,
  SubjectSearchRequest,
} from '../schemas/authzen.js';
import type { DecisionRequest } from '../schemas/decisions.js';
import {
  isActionName,
  isIdentifier,
  isResourceType,
  outsideVocabulary,
  resolveSubject,
  typeFilter,
  withDefaults,
  type Evaluation,
} from './mapping.js';
import { pageOf } from './paging.js';

export interface SearchResult<T> {
  page: SearchPage;
  results: T[];
}

/** Every result of a lookup: the whole list, which the AuthZEN pages then slice. */
const EVERYTHING = { page: 1, limit: Number.MAX_SAFE_INTEGER, skip: 0 };

const isWildcard = (action: string): boolean => action.endsWith('*');

/**
 * Whether an action on a resource depends on the request: no unconditional allow grants it, or a
 * deny with conditions touches it (what `entryFor` says of a whole entry, for one action).
 */
function dependsOnRequest(grants: readonly Grant[], candidate: Candidate, action: string): boolean {
  let unconditional = false;
  for (const grant of grants) {
    if (!grantCovers(grant, candidate)) continue;
    if (grant.effect === 'allow') {
      if (!grant.conditional && grant.actions.some((a) => actionCovers(a, action))) unconditional = true;
    } else if (
      grant.conditional &&
      grant.actions.some((d) => actionCovers(d, action) || actionCovers(action, d))
    ) {
      return true;
    }
  }
  return !unconditional;
}

/**
 * The OpenID AuthZEN Authorization API 1.0 over the decision engine (API.md §5.8). Every
 * evaluation goes through the decision service, so it is answered from the index and recorded
 * like `POST /v1/decisions/evaluate`. Searches read the same index: their results are what an
 * evaluation would allow at that moment.
 */
export class AuthZenService {
  private readonly base: string;

  constructor(
    private readonly deps: { index: PolicyIndex; decisions: DecisionService; access: AccessService },
    publicBaseUrl: string,
  ) {
    this.base = publicBaseUrl.replace(/\/+$/, '');
  }

  /** Access Evaluation API: one decision, with the recorded decision's id and reasons. */
  evaluate(request: EvaluationRequest): AuthZenDecision {
    return this.decideOne(request);
  }

  /**
   * Access Evaluations API: without evaluations, a single evaluation of the top-level members;
   * otherwise each evaluation with the top-level members as defaults, in order, stopping after
   * the first deny (`deny_on_first_deny`) or permit (`permit_on_first_permit`). An evaluation that
   * still lacks a required member is denied with an error in its context; the others go on.
   */
  evaluations(request: EvaluationsRequest): EvaluationsResponse {
    const items = request.evaluations ?? [];
    if (items.length === 0) {
      const single = withDefaults(request, {});
      if (typeof single === 'string') {
        throw validationFailed(`the request has no evaluations, and ${single}`, []);
      }
      return this.decideOne(single);
    }
    const semantic = request.options?.evaluations_semantic ?? 'execute_all';
    const out: AuthZenDecision[] = [];
    for (const item of items) {
      const evaluation = withDefaults(request, item);
      const answer: AuthZenDecision =
        typeof evaluation === 'string'
          ? { decision: false, context: { error: { status: 400, message: evaluation } } }
          : this.decideOne(evaluation);
      out.push(answer);
      if (semantic === 'deny_on_first_deny' && !answer.decision) break;
      if (semantic === 'permit_on_first_permit' && answer.decision) break;
    }
    return { evaluations: out };
  }

  /**
   * Subject Search API: the active principals of the requested type that the action on the
   * resource is allowed to, by name then id. A grant that depends on the request is decided with
   * the request's context and resource properties.
   */
  searchSubjects(request: SubjectSearchRequest): SearchResult<FoundSubject> {
    const { subject, action, resource } = request;
    const filter = typeFilter(subject.type);
    const found: FoundSubject[] = [];
    if (filter !== null && outsideVocabulary(action.name, resource) === undefined) {
      const reached = this.deps.access.whoCanAccess(resource.type, resource.id, action.name, EVERYTHING);
      for (const row of reached.principals) {
        const p = row.principal;
        if (filter !== 'any' && p.type !== filter) continue;
        if (row.conditional && !this.allowed(p.id, action.name, resource, request.context)) continue;
        found.push({ type: subject.type, id: p.id, properties: { name: p.name, principal_type: p.type } });
      }
    }
    const search = { subject: { type: subject.type }, action, resource, context: request.context ?? null };
    return pageOf(found, ['subject', search], request.page);
  }

  /**
   * Resource Search API: the resources of the requested type the subject may act on, by
   * identifier: those policies name, and the registered ones their globs match. A glob itself is
   * a result too (`properties.pattern`), standing for identifiers not registered.
   */
  searchResources(request: ResourceSearchRequest): SearchResult<FoundResource> {
    const { subject, action, resource } = request;
    const found: FoundResource[] = [];
    const p = this.activeSubject(subject);
    if (p && isResourceType(resource.type) && isActionName(action.name)) {
      const grants = grantsOf(this.deps.index, p);
      const entries = accessEntries(grants, registeredMatching(this.deps.index), p, {
        resourceType: resource.type,
        action: action.name,
      });
      for (const entry of entries) {
        const { type, identifier } = entry.resource;
        const candidate = { type, identifier, pattern: entry.pattern === true };
        const conditional = dependsOnRequest(grants, candidate, action.name);
        if (candidate.pattern) {
          found.push({
            type,
            id: identifier,
            properties: { pattern: true, ...(conditional ? { conditional: true as const } : {}) },
          });
        } else if (
          !conditional ||
          this.allowed(p.id, action.name, { type, id: identifier }, request.context)
        ) {
          found.push({ type, id: identifier });
        }
      }
    }
    const search = { subject, action, resource: { type: resource.type }, context: request.context ?? null };
    return pageOf(found, ['resource', search], request.page);
  }

  /**
   * Action Search API: the actions the subject may take on the resource, sorted. Actions granted
   * by name are listed by name (those depending on the request decided with its context and the
   * resource properties); a wildcard grant (`*`, `repo:*`) is listed as written with
   * `properties.pattern`, and `properties.except` for actions an unconditional deny removes.
   */
  searchActions(request: ActionSearchRequest): SearchResult<FoundAction> {
    const { subject, resource } = request;
    const found: FoundAction[] = [];
    const p = this.activeSubject(subject);
    if (p && isResourceType(resource.type) && isIdentifier(resource.id)) {
      const candidate = { type: resource.type, identifier: resource.id, pattern: false };
      const grants = grantsOf(this.deps.index, p);
      const entry = entryFor(candidate, grants);
      if (entry && toolFilter(p)(entry)) {
        for (const name of entry.actions) {
          const conditional = dependsOnRequest(grants, candidate, name);
          if (isWildcard(name)) {
            const except = (entry.denied_actions ?? []).filter((d) => d !== name && actionCovers(name, d));
            found.push({
              name,
              properties: {
                pattern: true,
                ...(except.length > 0 ? { except } : {}),
                ...(conditional ? { conditional: true as const } : {}),
              },
            });
          } else if (!conditional || this.allowed(p.id, name, resource, request.context)) {
            found.push({ name });
          }
        }
      }
    }
    const search = { subject, resource, context: request.context ?? null };
    return pageOf(found, ['action', search], request.page);
  }

  /** Policy Decision Point metadata (§9 of the standard). */
  metadata(): Metadata {
    const base = this.base;
    return {
      policy_decision_point: base,
      access_evaluation_endpoint: `${base}/access/v1/evaluation`,
      access_evaluations_endpoint: `${base}/access/v1/evaluations`,
      search_subject_endpoint: `${base}/access/v1/search/subject`,
      search_resource_endpoint: `${base}/access/v1/search/resource`,
      search_action_endpoint: `${base}/access/v1/search/action`,
    };
  }

  /** One evaluation through the decision service, so that it is recorded; fails closed. */
  private decideOne(evaluation: Evaluation): AuthZenDecision {
    const { subject, action, resource, context } = evaluation;
    const found = resolveSubject(this.deps.index, subject);
    const principal = 'principal' in found ? found.principal : undefined;
    // An inactive principal is the engine's to refuse, whatever else the request names.
    const refusal =
      'refusal' in found
        ? found.refusal
        : found.principal.status === 'active'
          ? outsideVocabulary(action.name, resource)
          : undefined;
    const request: DecisionRequest = {
      principal_id: principal?.id ?? subject.id,
      action: action.name,
      resource: {
        type: resource.type,
        identifier: resource.id,
        // Properties reach conditions as they are; values a condition cannot compare are unknown.
        ...(resource.properties !== undefined ? { attributes: resource.properties } : {}),
      },
      ...(context !== undefined ? { context } : {}),
    };
    const decision = this.deps.decisions.evaluate(request, refusal);
    return { decision: decision.allowed, context: { id: decision.id, reasons: decision.reasons } };
  }

  private activeSubject(subject: { type: string; id: string }): IxPrincipal | undefined {
    const found = resolveSubject(this.deps.index, subject);
    return 'principal' in found && found.principal.status === 'active' ? found.principal : undefined;
  }

  /** What the engine answers now, for a search (not an evaluation: nothing is recorded). */
  private allowed(
    principalId: string,
    action: string,
    resource: { type: string; id: string; properties?: Record<string, unknown> | undefined },
    context: AuthZenContext | undefined,
  ): boolean {
    return decide(this.deps.index, {
      principal_id: principalId,
      action,
      resource: {
        type: resource.type,
        identifier: resource.id,
        attributes: resource.properties,
      },
      context,
    }).allowed;
  }
}
