import {
  accessEntries,
  entryFor,
  grantCovers,
  toolFilter,
  type Candidate,
  type Grant,
} from '../decisions/access.js';
import { grantsOf, registeredMatching, type AccessService } from '../decisions/access-service.js';
import { decide, type RequestAction } from '../decisions/engine.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import type { IxPrincipal } from '../decisions/model.js';
import type { DecisionService } from '../decisions/service.js';
import { validationFailed } from '../errors/errors.js';
import type { Claims } from '../policies/conditions.js';
import { actionCovers } from '../policies/patterns.js';
import type {
  ActionSearchRequest,
  AuthZenAction,
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
import type { DecisionRequest, Reason } from '../schemas/decisions.js';
import { ConnectorNames, type ConnectorLookup } from './connectors.js';
import {
  authzenId,
  isActionName,
  isIdentifier,
  isResourceType,
  outsideVocabulary,
  resolveAgent,
  resolveSubject,
  typeFilter,
  typeFits,
  withDefaults,
  type Evaluation,
  type SourceScope,
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

/** An AuthZEN action as the engine takes it: properties, when sent, are claims. */
const requestAction = (action: AuthZenAction): RequestAction =>
  action.properties === undefined ? action.name : { name: action.name, properties: action.properties };

/**
 * The OpenID AuthZEN Authorization API 1.0 over the decision engine (docs/api.md §5.8). Every
 * evaluation goes through the decision service, so it is answered from the index and recorded
 * like `POST /v1/decisions/evaluate`. Searches read the same index: their results are what an
 * evaluation would allow at that moment, with the same claims.
 */
export class AuthZenService {
  private readonly base: string;
  private readonly connectors: ConnectorNames;

  constructor(
    private readonly deps: {
      index: PolicyIndex;
      decisions: DecisionService;
      access: AccessService;
      connectors: ConnectorLookup;
    },
    publicBaseUrl: string,
  ) {
    this.base = publicBaseUrl.replace(/\/+$/, '');
    this.connectors = new ConnectorNames(deps.connectors);
  }

  /** Access Evaluation API: one decision, with the recorded decision's id and reasons. */
  async evaluate(request: EvaluationRequest): Promise<AuthZenDecision> {
    return this.decideOne(request, await this.scopeOf(request.subject));
  }

  /**
   * Access Evaluations API: without evaluations, a single evaluation of the top-level members;
   * otherwise each evaluation with the top-level members as defaults, in order, stopping after
   * the first deny (`deny_on_first_deny`) or permit (`permit_on_first_permit`). An evaluation that
   * still lacks a required member is denied with an error in its context; the others go on.
   */
  async evaluations(request: EvaluationsRequest): Promise<EvaluationsResponse> {
    const items = request.evaluations ?? [];
    if (items.length === 0) {
      const single = withDefaults(request, {});
      if (typeof single === 'string') {
        throw validationFailed(`the request has no evaluations, and ${single}`, []);
      }
      return this.decideOne(single, await this.scopeOf(single.subject));
    }
    const semantic = request.options?.evaluations_semantic ?? 'execute_all';
    const evaluations = items.map((item) => withDefaults(request, item));
    // Connectors are looked up first; the decisions then go in slices, the event loop serving
    // other requests between them.
    const scopes = await Promise.all(
      evaluations.map((e) => (typeof e === 'string' ? Promise.resolve(undefined) : this.scopeOf(e.subject))),
    );
    // Decided in order over the index, on a decision thread where the list is long.
    const decided = await this.deps.decisions.many(
      evaluations.map((e, i) => (typeof e === 'string' ? null : this.requestOf(e, scopes[i]))),
      semantic === 'deny_on_first_deny'
        ? 'deny'
        : semantic === 'permit_on_first_permit'
          ? 'permit'
          : undefined,
    );
    const out: AuthZenDecision[] = decided.map((d, i) => {
      if (d !== null) return { decision: d.allowed, context: { id: d.id, reasons: d.reasons } };
      return { decision: false, context: { error: { status: 400, message: evaluations[i] as string } } };
    });
    return { evaluations: out };
  }

  /**
   * Subject Search API: the active principals of the requested type that the action on the
   * resource is allowed to, by name then id, each once by its AuthZEN id. A grant that depends on
   * the request is decided with the request's context, resource properties and claims (the
   * subject properties standing for every subject sought).
   */
  async searchSubjects(request: SubjectSearchRequest): Promise<SearchResult<FoundSubject>> {
    const { subject, action, resource } = request;
    const filter = typeFilter(subject.type);
    const scope = await this.scopeOf(subject);
    const found: FoundSubject[] = [];
    if (filter !== null && scope !== null && outsideVocabulary(action.name, resource) === undefined) {
      const seen = new Set<string>();
      const reached = this.deps.access.whoCanAccess(resource.type, resource.id, action.name, EVERYTHING);
      for (const row of reached.principals) {
        const p = this.deps.index.principalView(row.principal.id);
        if (!p || !typeFits(filter, p)) continue;
        if (scope !== undefined && p.connector_source !== scope) continue;
        if (
          row.conditional &&
          !this.allowed(p.id, requestAction(action), resource, request.context, subject.properties)
        )
          continue;
        // Principals of two connectors may share an AuthZEN id: the caller sees it once.
        const id = authzenId(p);
        if (seen.has(id)) continue;
        seen.add(id);
        found.push({ type: subject.type, id });
      }
    }
    const search = {
      subject: { type: subject.type, properties: subject.properties ?? null },
      action,
      resource,
      context: request.context ?? null,
    };
    return pageOf(found, ['subject', search], request.page);
  }

  /**
   * Resource Search API: the resources of the requested type the subject may act on, by
   * identifier: those policies name, and the registered ones their globs match. A glob itself is
   * a result too (`properties.pattern`), standing for identifiers not registered.
   */
  async searchResources(request: ResourceSearchRequest): Promise<SearchResult<FoundResource>> {
    const { subject, action, resource } = request;
    const found: FoundResource[] = [];
    const p = this.activeSubject(subject, await this.scopeOf(subject));
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
          this.allowed(
            p.id,
            requestAction(action),
            { type, id: identifier },
            request.context,
            subject.properties,
          )
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
   * by name are listed by name (those depending on the request decided with its context, the
   * resource properties and the subject's claims; no action claims, since no action is named); a
   * wildcard grant (`*`, `repo:*`) is listed as written with `properties.pattern`, and
   * `properties.except` for actions an unconditional deny removes.
   */
  async searchActions(request: ActionSearchRequest): Promise<SearchResult<FoundAction>> {
    const { subject, resource } = request;
    const found: FoundAction[] = [];
    const p = this.activeSubject(subject, await this.scopeOf(subject));
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
          } else if (
            !conditional ||
            this.allowed(p.id, name, resource, request.context, subject.properties)
          ) {
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

  /** The source a subject's `properties.connector` keeps it to, when it names one. */
  private async scopeOf(subject: { properties?: Claims | undefined }): Promise<SourceScope> {
    const properties = subject.properties;
    if (properties === undefined || !Object.hasOwn(properties, 'connector')) return undefined;
    return this.connectors.sourceOf(properties['connector']);
  }

  /**
   * One evaluation through the decision service, so that it is recorded; fails closed. With a
   * `context.agent` naming another principal, the agent is the one deciding, on behalf of the
   * subject (§10): the engine then asks for a delegation from the subject to the agent that
   * covers the request, and both principals must be allowed.
   */
  private decideOne(evaluation: Evaluation, scope: SourceScope): AuthZenDecision {
    const { request, refusal } = this.requestOf(evaluation, scope);
    const decision = this.deps.decisions.evaluate(request, refusal);
    return { decision: decision.allowed, context: { id: decision.id, reasons: decision.reasons } };
  }

  /** The decision request an evaluation stands for, and a deny settled before the engine looks. */
  private requestOf(
    evaluation: Evaluation,
    scope: SourceScope,
  ): { request: DecisionRequest; refusal?: Reason } {
    const { subject, action, resource, context } = evaluation;
    const found = resolveSubject(this.deps.index, subject, scope);
    const principal = 'principal' in found ? found.principal : undefined;
    const named = context?.['agent'];
    const agentRef = typeof named === 'string' ? named : undefined;
    const agent = agentRef === undefined ? undefined : resolveAgent(this.deps.index, agentRef);
    const agentPrincipal = agent && 'principal' in agent ? agent.principal : undefined;
    const subjectId = principal?.id ?? subject.id;
    // An agent that is the subject itself acts for no one; one that names no principal is
    // recorded as it was named.
    const actor = agentPrincipal?.id === subjectId ? undefined : (agentPrincipal?.id ?? agentRef);
    // An inactive principal is the engine's to refuse, whatever else the request names.
    const refusal =
      'refusal' in found
        ? found.refusal
        : agent && 'refusal' in agent
          ? agent.refusal
          : found.principal.status === 'active' && (agentPrincipal?.status ?? 'active') === 'active'
            ? outsideVocabulary(action.name, resource)
            : undefined;
    const request: DecisionRequest = {
      principal_id: actor ?? subjectId,
      action: requestAction(action),
      resource: {
        type: resource.type,
        identifier: resource.id,
        // Properties reach conditions as they are; values a condition cannot compare are unknown.
        ...(resource.properties !== undefined ? { attributes: resource.properties } : {}),
      },
      ...(context !== undefined ? { context } : {}),
      ...(subject.properties !== undefined ? { subject_properties: subject.properties } : {}),
      ...(actor !== undefined ? { on_behalf_of: [subjectId] } : {}),
    };
    return { request, refusal };
  }

  private activeSubject(subject: { type: string; id: string }, scope: SourceScope): IxPrincipal | undefined {
    const found = resolveSubject(this.deps.index, subject, scope);
    return 'principal' in found && found.principal.status === 'active' ? found.principal : undefined;
  }

  /** What the engine answers now, for a search (not an evaluation: nothing is recorded). */
  private allowed(
    principalId: string,
    action: RequestAction,
    resource: { type: string; id: string; properties?: Record<string, unknown> | undefined },
    context: AuthZenContext | undefined,
    subjectProperties: Claims | undefined,
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
      subject_properties: subjectProperties,
    }).allowed;
  }
}
