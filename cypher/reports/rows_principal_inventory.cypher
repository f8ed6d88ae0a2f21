// The next page of every principal, in id order after the last one written, as one row: how many
// were read, the last id read (where the next page starts) and the report's rows.
MATCH (p:Principal)
WHERE p.id > $after
WITH p
ORDER BY p.id
LIMIT $limit
OPTIONAL MATCH (p)-[:REPORTS_TO]->(m:Principal)
WITH p, m
ORDER BY p.id
RETURN count(p) AS scanned, last(collect(p.id)) AS last, collect({
  id: p.id, type: p.type, name: p.name, email: p.email, status: p.status,
  connector_source: p.connector_source, owner: p.`meta.owner`, manager_id: m.id,
  groups: COUNT { (p)-[:MEMBER_OF]->(:Group) }, risk_score: p.risk_score,
  risk_factors: p.risk_factors, last_login: p.last_login, created_at: p.created_at,
  updated_at: p.updated_at
}) AS rows
