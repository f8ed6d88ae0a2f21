// Principals as they are now, for the decision index to follow a change (the shape of
// decisions/index_principals); ids that no longer exist give no row.
UNWIND $ids AS id
MATCH (p:Principal {id: id})
RETURN p.id AS id, p.type AS type, p.status AS status, p.name AS name, p.email AS email,
  p.connector_source AS connector_source, p.connector_id AS connector_id,
  [p.created_at.epochSeconds, p.created_at.nanosecond, p.updated_at.epochSeconds,
   p.updated_at.nanosecond, p.last_login.epochSeconds, p.last_login.nanosecond] AS times,
  p.risk_score AS risk_score, p.privilege_factors AS privileges,
  [k IN keys(p) WHERE k STARTS WITH 'attr.' OR k STARTS WITH 'meta.' | [k, p[k]]] AS fields,
  [(p)-[:MEMBER_OF]->(g:Group) | g.id] AS groups
