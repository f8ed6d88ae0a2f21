// The decision index at start: principals in pages of $batch by id, each with what the index
// holds of it (src/decisions/model.ts) and the groups it is a direct member of. Timestamps come
// as text, which costs the driver far less to read than temporal values.
MATCH (p:Principal)
WHERE p.id > $after
WITH p
ORDER BY p.id
LIMIT $batch
RETURN p.id AS id, p.type AS type, p.status AS status, p.name AS name, p.email AS email,
  p.connector_source AS connector_source, p.connector_id AS connector_id,
  toString(p.created_at) AS created_at, toString(p.updated_at) AS updated_at,
  toString(p.last_login) AS last_login, p.risk_score AS risk_score, p.privilege_factors AS privileges,
  [k IN keys(p) WHERE k STARTS WITH 'attr.' OR k STARTS WITH 'meta.' | [k, p[k]]] AS fields,
  [(p)-[:MEMBER_OF]->(g:Group) | g.id] AS groups
