// Which of $ids may be members of a group of the connector (by its id): its users SCIM still
// sees, and its groups.
UNWIND $ids AS id
CALL (id) {
  MATCH (p:Principal {id: id})
  WHERE p.connector_ref = $connector AND p.type = 'USER' AND p.status IN ['active', 'suspended']
  RETURN p.id AS found
  UNION
  MATCH (g:Group {id: id})
  WHERE g.connector_ref = $connector AND g.source = 'connector'
  RETURN g.id AS found
}
RETURN found AS id
