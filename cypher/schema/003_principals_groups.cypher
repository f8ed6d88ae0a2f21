// Principals, the attribute vocabulary that makes attribute search index-backed, and groups.
CREATE CONSTRAINT principal_id IF NOT EXISTS FOR (p:Principal) REQUIRE p.id IS UNIQUE;
CREATE CONSTRAINT principal_connector_identity IF NOT EXISTS
FOR (p:Principal) REQUIRE (p.connector_source, p.connector_id) IS UNIQUE;
// Type and status are also labels (User, AiAgent, ..., Active, Deleted, ...): filters on them use
// the label index, so they need no property index.
CREATE INDEX principal_connector_source IF NOT EXISTS FOR (p:Principal) ON (p.connector_source);
CREATE INDEX principal_created_at IF NOT EXISTS FOR (p:Principal) ON (p.created_at);
CREATE INDEX principal_updated_at IF NOT EXISTS FOR (p:Principal) ON (p.updated_at);
CREATE INDEX principal_last_login IF NOT EXISTS FOR (p:Principal) ON (p.last_login);
CREATE INDEX principal_risk_score IF NOT EXISTS FOR (p:Principal) ON (p.risk_score);
CREATE INDEX principal_name IF NOT EXISTS FOR (p:Principal) ON (p.name);
CREATE INDEX principal_email IF NOT EXISTS FOR (p:Principal) ON (p.email);
// One node per distinct (key, value) of principal attributes; an array attribute links to one
// node per element. The constraint's index serves equality, $in, $startsWith and ranges.
CREATE CONSTRAINT attribute_key_value IF NOT EXISTS FOR (a:Attribute) REQUIRE (a.key, a.value) IS UNIQUE;
CREATE CONSTRAINT group_id IF NOT EXISTS FOR (g:Group) REQUIRE g.id IS UNIQUE;
// Names are unique per source: among API groups, and among the groups of one connector.
CREATE CONSTRAINT group_name_key IF NOT EXISTS FOR (g:Group) REQUIRE g.name_key IS UNIQUE;
CREATE INDEX group_name IF NOT EXISTS FOR (g:Group) ON (g.name);
CREATE INDEX group_connector_source IF NOT EXISTS FOR (g:Group) ON (g.connector_source);
CREATE CONSTRAINT group_connector_identity IF NOT EXISTS
FOR (g:Group) REQUIRE (g.connector_source, g.connector_id) IS UNIQUE;
// Every query here reaches relationships from a node it has already found; none scans them by
// type. The default relationship type lookup index would still be updated on each of the
// (many) attribute, membership and manager links, so it goes.
DROP INDEX index_f7700477 IF EXISTS;
