// Identity connectors and the SCIM service provider they use.
CREATE CONSTRAINT connector_id IF NOT EXISTS FOR (c:Connector) REQUIRE c.id IS UNIQUE;
// Names are unique among connectors that are not deleted, regardless of case.
CREATE CONSTRAINT connector_name_key IF NOT EXISTS FOR (c:Connector) REQUIRE c.name_key IS UNIQUE;
// The SHA-256 of the connector's SCIM token: the token decides the connector.
CREATE CONSTRAINT connector_token_hash IF NOT EXISTS FOR (c:Connector) REQUIRE c.token_hash IS UNIQUE;
// A SCIM userName is unique within its connector, regardless of case (user_name holds it lower-cased;
// a deprovisioned user gives it up).
CREATE CONSTRAINT principal_connector_user_name IF NOT EXISTS
FOR (p:Principal) REQUIRE (p.connector_source, p.user_name) IS UNIQUE;
CREATE INDEX principal_user_name IF NOT EXISTS FOR (p:Principal) ON (p.user_name);
CREATE INDEX principal_connector_id IF NOT EXISTS FOR (p:Principal) ON (p.connector_id);
// A report whose manager has not arrived yet waits on the manager's SCIM id or externalId.
CREATE INDEX principal_manager_ref IF NOT EXISTS FOR (p:Principal) ON (p.manager_ref);
CREATE INDEX group_connector_id IF NOT EXISTS FOR (g:Group) ON (g.connector_id);
