// Takes a registration back: attributes, owner and label go; the node itself goes too unless a
// policy still names the resource, in which case it stays, unregistered. `named` counts those.
MATCH (r:Resource {type: $type, identifier: $identifier})
WITH r, COUNT { (:Policy)-[:ALLOWS|DENIES]->(r) } AS named
CALL (r, named) {
  WITH r
  WHERE named > 0
  SET r = {type: r.type, identifier: r.identifier, registered: false, created_at: r.created_at, updated_at: datetime($now)}
  REMOVE r:Registered
  WITH r
  MATCH (r)-[e:OWNED_BY]->()
  DELETE e
}
CALL (r, named) {
  WITH r
  WHERE named = 0
  DETACH DELETE r
}
RETURN named
