// Whether the delegate already acts, directly or down a chain of delegations that still apply,
// for the delegator: a delegation from the delegator to the delegate would then close a cycle.
// Chains are at most a few links long; the walk stops at the first path found.
MATCH (a:Principal {id: $delegateId}), (b:Principal {id: $delegatorId})
RETURN EXISTS {
  MATCH (a) (()-[d:DELEGATES_TO WHERE d.status = 'active' AND d.expires_at > datetime($now)]->()){1,16} (b)
} AS cycle
