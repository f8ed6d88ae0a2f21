// A connector's users by when they were last modified and by when they were created, each index
// holding the other timestamp too (cypher/principals/search_scoped.cypher): a SCIM list filtered
// on meta.lastModified (or meta.created) counts the users in the range in one index range without
// reading a node, and reads its page in creation order from the other, testing the range against
// the values the index holds. Only User nodes with a connector reference are in them.
CREATE INDEX principal_user_connector_updated IF NOT EXISTS
FOR (p:User) ON (p.connector_ref, p.updated_at, p.created_at);
CREATE INDEX principal_user_connector_created IF NOT EXISTS
FOR (p:User) ON (p.connector_ref, p.created_at, p.updated_at);
// The connector's principals SCIM no longer sees, by the same timestamps, so that a count of the
// users in a range can leave them out without looking at every user's status: few nodes, and
// written only when a principal is deprovisioned or deleted.
CREATE INDEX principal_deprovisioned_connector IF NOT EXISTS
FOR (p:Deprovisioned) ON (p.connector_ref, p.updated_at, p.created_at);
CREATE INDEX principal_deleted_connector IF NOT EXISTS
FOR (p:Deleted) ON (p.connector_ref, p.updated_at, p.created_at);
