// The delegator and the delegate of a new delegation. New delegations queue on one lock, so
// that two created at once cannot together close a cycle that neither check alone would see
// (a → b and b → a). Either principal comes back null when no principal has the id.
MERGE (l:Lock {name: 'delegations'})
SET l.taken = true
REMOVE l.taken
WITH l
OPTIONAL MATCH (a:Principal {id: $delegatorId})
OPTIONAL MATCH (b:Principal {id: $delegateId})
RETURN a {.id, .type, .status} AS delegator, b {.id, .type, .status} AS delegate
