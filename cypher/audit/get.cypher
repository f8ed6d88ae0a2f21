MATCH (e:AuditEvent {id: $id})
RETURN e {.*} AS event
