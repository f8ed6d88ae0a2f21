/**
 * The API's shapes under the names the console reads them by. Each is the service's own schema,
 * generated into ./api-types from its OpenAPI document (`npm run console:types`); nothing here is
 * written by hand but the names and the generic page of a list.
 */
import type * as Api from './api-types';

export type Pagination = Api.Pagination;

/** A page of any list operation: its items and where the page sits. */
export interface List<T> {
  data: T[];
  pagination: Pagination;
}

export type PrincipalType = Api.PrincipalType;
export type PrincipalStatus = Api.PrincipalStatus;

/** A principal as lists and searches give it. */
export type PrincipalSummary = Api.PrincipalListItem;

export type Principal = Api.Principal;

/** A principal met in its relationships: a manager, a report or a group reached. */
export type Card = Api.PrincipalSummary | Api.ReportSummary | Api.ReachedGroup;

export type Relationship = Api.RelationshipEntry;
export type RelationshipRecord = Api.RelationshipRecord;

/** One step of a membership path, principal → group → … → group. */
export type PathStep = NonNullable<Api.AccessGrant['path']>[number];

export type AccessEntry = Api.AccessEntry;
export type AccessRecord = Api.AccessRecord;

/** The audit event of the change that made an entry true, as access `as_of` an instant names it. */
export type GrantingEvent = NonNullable<AccessEntry['granted_by_event']>;

export type AuditEvent = Api.AuditEvent;

/** A registered resource. */
export type Resource = Api.Resource;
export type ResourceAccess = Api.ResourceAccess;

export type Policy = Api.Policy;

/** What a simulated policy change does to one principal's access to one resource. */
export type AccessChange = NonNullable<Api.SimulationResult['access_changes']>[number];

/** How a policy reaches a principal: directly, through a group (with its path), or by matching it. */
export type Grant = Api.AccessGrant | Api.AccessChangeGrant;

/** A recorded change of one principal's access to one resource, with its cause. */
export type RecordedChange = Api.AccessChange;
export type RecordedChangeList = Api.AccessChangeList;

/** The answer of a policy simulation (`Api.Simulation` is its request). */
export type Simulation = Api.SimulationResult;

export type TraceCandidate = Api.TraceCandidate;
export type TraceLink = Api.TraceLink;
export type TraceVerdict = Api.TraceVerdict;
export type Decision = Api.Decision;

export type Delegation = Api.Delegation;
export type PrincipalDelegations = Api.PrincipalDelegations;

export type Report = Api.Report;

export type TokenResponse = Api.TokenResponse;
export type ProblemDocument = Api.Problem;
