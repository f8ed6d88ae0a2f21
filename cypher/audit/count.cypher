// Filters are appended by the audit repository from a fixed set of predicates.
MATCH (e:AuditEvent)
WHERE true /*FILTERS*/
RETURN count(e) AS total
