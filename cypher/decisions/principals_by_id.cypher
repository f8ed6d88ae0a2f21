// Principals as they are now, for the decision index to follow a change (the shape of
// decisions/index_principals); ids that no longer exist give no row.
UNWIND $ids AS id
MATCH (p:Principal {id: id})
RETURN p.id AS id, p.type AS type, p.status AS status, p.name AS name, p.email AS email,
  p.connector_source AS connector_source, p.connector_id AS connector_id,
  toString(p.created_at) AS created_at, toString(p.updated_at) AS updated_at,
  toString(p.last_login) AS last_login, p.risk_score AS risk_score, p.privilege_factors AS privileges,
  [k IN keys(p) WHERE k STARTS WITH 'attr.' OR k STARTS WITH 'meta.' | [k, p[k]]] AS fields,
  [(p)-[:MEMBER_OF]->(g:Group) | g.id] AS groups
