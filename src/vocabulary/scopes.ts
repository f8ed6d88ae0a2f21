/**
 * The scopes a client may hold, one per family of operations. Only scopes that some operation
 * requires are listed: a scope is advertised (token endpoint metadata, OpenAPI, client creation)
 * from the release that first uses it. `test/http/operations.test.ts` keeps this list and the
 * operations in step.
 */
export const SCOPES = [
  'principals:read',
  'principals:write',
  'groups:read',
  'groups:write',
  'policies:read',
  'policies:write',
  'decisions:evaluate',
  'decisions:read',
  'audit:read',
  'audit:reports',
  'webhooks:read',
  'webhooks:write',
  'clients:admin',
  'connectors:admin',
  'delegations:read',
  'delegations:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'principals:read': 'Read principals, their relationships and access',
  'principals:write': 'Create, update and delete principals',
  'groups:read': 'Read groups and memberships',
  'groups:write': 'Manage groups and memberships',
  'policies:read': 'Read policies and resources, simulate policies, look up who can access a resource',
  'policies:write': 'Manage policies and register resources',
  'decisions:evaluate': 'Ask for access decisions (also through AuthZEN)',
  'decisions:read': 'Read recorded decisions',
  'audit:read': 'Read audit events',
  'audit:reports': 'Generate audit reports and download them',
  'webhooks:read': 'Read webhooks and their delivery logs',
  'webhooks:write': 'Manage webhooks, rotate their secrets and send test deliveries',
  'clients:admin': 'Manage API clients',
  'connectors:admin': 'Manage identity connectors and their SCIM tokens',
  'delegations:read': 'Read who may act for whom (delegations)',
  'delegations:write': 'Create and revoke delegations',
};
