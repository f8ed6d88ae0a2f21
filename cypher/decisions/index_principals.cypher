// The decision index at start: principals in pages of $batch by id, each with what the index
// holds of it (src/decisions/principal-table.ts) and the groups it is a direct member of.
// Timestamps come as epoch seconds and nanoseconds, numbers the index stores as they are.
MATCH (p:Principal)
WHERE p.id > $after
WITH p
ORDER BY p.id
LIMIT $batch
RETURN p.id AS id, p.type AS type, p.status AS status, p.name AS name, p.email AS email,
  p.connector_source AS connector_source, p.connector_id AS connector_id,
  [p.created_at.epochSeconds, p.created_at.nanosecond, p.updated_at.epochSeconds,
   p.updated_at.nanosecond, p.last_login.epochSeconds, p.last_login.nanosecond] AS times,
  p.risk_score AS risk_score, p.privilege_factors AS privileges,
  [k IN keys(p) WHERE k STARTS WITH 'attr.' OR k STARTS WITH 'meta.' | [k, p[k]]] AS fields,
  [(p)-[:MEMBER_OF]->(g:Group) | g.id] AS groups
