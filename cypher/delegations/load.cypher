// Bulk delegations (benchmarks and imports): the edges delegations/create leaves, active.
UNWIND $rows AS row
MATCH (a:Principal {id: row.delegatorId}), (b:Principal {id: row.delegateId})
CREATE (a)-[d:DELEGATES_TO]->(b)
SET d = row.props, d.status = 'active', d.expires_at = datetime(row.expiresAt),
    d.created_at = datetime(row.createdAt)
RETURN count(d) AS created
