/** The API's shapes as the console reads them (docs/api.md); only the fields it uses. */

export interface Pagination {
  total: number;
  page: number;
  per_page: number;
  pages: number;
}

export interface List<T> {
  data: T[];
  pagination: Pagination;
}

export type PrincipalType = 'USER' | 'SERVICE_ACCOUNT' | 'AI_AGENT' | 'API_KEY';

export interface PrincipalSummary {
  id: string;
  type: PrincipalType;
  name: string;
  email?: string | null;
  status: string;
  attributes: Record<string, string | string[]>;
  connector_source?: string | null;
  created_at: string;
  last_login?: string | null;
  risk_score?: number;
}

export interface Principal extends PrincipalSummary {
  description?: string | null;
  metadata: Record<string, string>;
  risk_score: number;
  risk_factors: { code: string; points: number }[];
  created_by?: string;
  updated_at?: string;
  deleted_at?: string;
}

export interface Card {
  id: string;
  name: string;
  type: string;
  email?: string | null;
  /** Reports: the direct manager. */
  manager_id?: string;
  /** Groups: the members one level nearer through which the group is reached. */
  via?: string[];
}

export type Relationship =
  | { type: 'manager'; principal: Card; depth: number }
  | { type: 'reports'; principals: Card[]; depth: number; count: number; truncated?: boolean }
  | { type: 'group_member'; principals: Card[]; depth: number; count: number; truncated?: boolean };

export interface PathStep {
  id: string;
  name: string;
  type: string;
}

export interface AccessEntry {
  resource: { type: string; identifier: string };
  actions: string[];
  denied_actions?: string[];
  granted_by: string[];
  granted_at: string;
  conditional: boolean;
  pattern?: boolean;
  grants?: {
    policy_id: string;
    policy_name?: string;
    via: 'principal' | 'group' | 'match';
    path?: PathStep[];
  }[];
}

export interface AccessRecord {
  principal_id: string;
  access: AccessEntry[];
  total_resources: number;
  pagination?: Pagination;
}

export interface AuditEvent {
  id: string;
  type: string;
  occurred_at: string;
  actor: { type: string; id: string };
  target: { type: string; id: string };
  outcome: string;
  changes?: Record<string, { from?: unknown; to?: unknown }>;
}

export interface ResourceAccess {
  resource: { type: string; identifier: string; registered?: boolean };
  principals: {
    principal: { id: string; name: string; type: string; email: string | null };
    actions: string[];
    denied_actions?: string[];
    granted_by: string[];
    conditional: boolean;
  }[];
  pagination: Pagination;
}

export interface Policy {
  id: string;
  name: string;
  description?: string;
  effect: 'allow' | 'deny';
  subjects: Record<string, unknown>;
  actions: string[];
  resources: { type: string; identifier: string }[];
  conditions?: Record<string, unknown>;
  status: string;
  version: number;
  updated_at?: string;
}

export interface AccessChange {
  principal_id: string;
  resource: { type: string; identifier: string };
  gained: string[];
  lost: string[];
}

export interface Simulation {
  access_changes?: AccessChange[];
  results?: { request: unknown; current: string; simulated: string; changed: boolean }[];
  summary: {
    evaluated: number;
    changed: number;
    newly_allowed: number;
    newly_denied: number;
    principals_affected: number;
  };
}

export interface TraceCandidate {
  policy_id: string;
  policy_version: number;
  name: string;
  effect: 'allow' | 'deny';
  principal_id: string;
  subject: { matched: boolean; via?: 'principal' | 'group' | 'match'; path?: PathStep[] };
  conditions: { path: string; result: string; missing?: string[] }[];
  applied: boolean;
  why: string;
}

export interface Decision {
  id: string;
  decision: 'ALLOW' | 'DENY';
  allowed: boolean;
  principal_id: string;
  action: string;
  resource: { type: string; identifier: string };
  reasons: { code: string; policy_id?: string; policy_version?: number; message?: string }[];
  granted_by: string[];
  evaluated_at: string;
  trace?: {
    principals: { id: string; found: boolean; type?: string; status?: string; groups?: string[] }[];
    candidates: TraceCandidate[];
  };
}

export interface Report {
  id: string;
  type: string;
  format: string;
  status: 'pending' | 'running' | 'completed' | 'failed';
  requested_at: string;
  completed_at?: string;
  row_count?: number;
  error?: string;
}
