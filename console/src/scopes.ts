/**
 * What each part of the console needs from the signed-in client's token: the scope of the API
 * operations it calls (docs/api.md §4.2). A part whose scope is missing is shown greyed out with this
 * reason instead of failing on its first request.
 */
export const FEATURES = {
  search: { scope: 'principals:read', label: 'Principal search' },
  principal: { scope: 'principals:read', label: 'Principal pages' },
  audit: { scope: 'audit:read', label: 'Audit trail' },
  history: { scope: 'audit:read', label: 'Access history' },
  resources: { scope: 'policies:read', label: 'Resource access' },
  policies: { scope: 'policies:read', label: 'Policy what-if' },
  decisions: { scope: 'decisions:evaluate', label: 'Decisions explorer' },
  findings: { scope: 'audit:reports', label: 'Orphaned and dormant identities' },
  delegations: { scope: 'delegations:read', label: 'Delegations' },
  membership: { scope: 'groups:write', label: 'Adding a member to a group' },
} as const;

export type Feature = keyof typeof FEATURES;

export function missingScope(scopes: ReadonlySet<string>, feature: Feature): string | null {
  const { scope, label } = FEATURES[feature];
  return scopes.has(scope)
    ? null
    : `${label} needs the ${scope} scope, which this client's token does not hold. Ask an administrator to grant it to the client.`;
}
