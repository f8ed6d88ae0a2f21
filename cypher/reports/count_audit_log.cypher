MATCH (e:AuditEvent)
WHERE e.occurred_at >= datetime($since) AND e.occurred_at < datetime($until)
RETURN count(e) AS total
