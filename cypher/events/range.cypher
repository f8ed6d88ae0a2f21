// Events of one shard committed after $after, up to $upTo, in commit order.
MATCH (e:AuditEvent)
WHERE e.shard = $shard AND e.seq > $after AND e.seq <= $upTo
RETURN e {.*} AS event
ORDER BY e.seq, e.id
