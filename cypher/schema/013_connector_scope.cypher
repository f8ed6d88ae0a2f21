// Connectors are scoped by their id, never their name: a connector that reuses a deleted one's
// name sees none of its users or groups. Every principal and group a connector provisions holds
// the connector's id in `connector_ref` (`connector_source` stays, the name the API shows), and
// what was unique per connector name is unique per connector id: a user's userName and a group's
// name (its name_key). An externalId is not unique, a user's nor a group's (RFC 7643 makes only
// userName unique, and clients repeat externalIds): they keep plain indexes.
DROP CONSTRAINT principal_connector_identity IF EXISTS;
DROP CONSTRAINT principal_connector_user_name IF EXISTS;
DROP CONSTRAINT group_connector_identity IF EXISTS;
CREATE INDEX principal_connector_ref IF NOT EXISTS FOR (p:Principal) ON (p.connector_ref);
CREATE INDEX group_connector_ref IF NOT EXISTS FOR (g:Group) ON (g.connector_ref);
// Principals and groups written before: each gets the id of the connector of its name created
// most recently at or before it was, else of the earliest one of that name created after it; one
// whose name no connector has keeps none. Groups also get their name_key in the connector's id
// (`connector:<id>:<name>`). Committed in batches of their own, touching only what still has no
// connector_ref, so running them again changes nothing.
MATCH (c:Connector)
WITH c.name AS name, collect(c {.id, .created_at}) AS connectors
WITH collect({name: name, connectors: connectors}) AS named
MATCH (p:Principal)
WHERE p.connector_source IS NOT NULL AND p.connector_ref IS NULL
WITH p, [n IN named WHERE n.name = p.connector_source | n.connectors][0] AS candidates
WHERE candidates IS NOT NULL
CALL (p, candidates) {
  UNWIND candidates AS c
  WITH p, c, coalesce(c.created_at <= p.created_at, false) AS before
  ORDER BY before DESC, CASE WHEN before THEN c.created_at END DESC, c.created_at ASC
  LIMIT 1
  SET p.connector_ref = c.id
} IN TRANSACTIONS OF 10000 ROWS;
MATCH (c:Connector)
WITH c.name AS name, collect(c {.id, .created_at}) AS connectors
WITH collect({name: name, connectors: connectors}) AS named
MATCH (g:Group)
WHERE g.connector_source IS NOT NULL AND g.connector_ref IS NULL
WITH g, [n IN named WHERE n.name = g.connector_source | n.connectors][0] AS candidates
WHERE candidates IS NOT NULL
CALL (g, candidates) {
  UNWIND candidates AS c
  WITH g, c, coalesce(c.created_at <= g.created_at, false) AS before
  ORDER BY before DESC, CASE WHEN before THEN c.created_at END DESC, c.created_at ASC
  LIMIT 1
  WITH g, c, 'connector:' + g.connector_source + ':' AS old
  SET g.connector_ref = c.id,
    g.name_key = 'connector:' + c.id + ':' + CASE
      WHEN g.name_key STARTS WITH old THEN substring(g.name_key, size(old))
      ELSE toLower(trim(g.name))
    END
} IN TRANSACTIONS OF 10000 ROWS;
CREATE CONSTRAINT principal_connector_ref_user_name IF NOT EXISTS
FOR (p:Principal) REQUIRE (p.connector_ref, p.user_name) IS UNIQUE;
// A connector's groups by externalId, and in creation order (its SCIM lists page through them).
CREATE INDEX group_connector_ref_external_id IF NOT EXISTS FOR (g:Group) ON (g.connector_ref, g.connector_id);
CREATE INDEX group_connector_ref_created IF NOT EXISTS FOR (g:Group) ON (g.connector_ref, g.created_at);
