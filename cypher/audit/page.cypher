// Filters are appended by the audit repository from a fixed set of predicates.
MATCH (e:AuditEvent)
WHERE true /*FILTERS*/
WITH e
ORDER BY e.occurred_at DESC, e.id DESC
SKIP $skip
LIMIT $limit
RETURN e {.*} AS event
