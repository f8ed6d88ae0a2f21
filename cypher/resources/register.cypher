// Registers a resource: its properties become exactly $props (attributes as `attr.<key>`), it
// takes the Registered label that glob scans look for, and an OWNED_BY edge to its owner.
MATCH (r:Resource {type: $type, identifier: $identifier})
WITH r, r.created_at AS created
SET r = $props
SET r.created_at = created, r.updated_at = datetime($now), r.registered = true, r:Registered
WITH r
CALL (r) {
  MATCH (r)-[e:OWNED_BY]->()
  DELETE e
}
CALL (r) {
  MATCH (p:Principal {id: $ownerId})
  CREATE (r)-[:OWNED_BY]->(p)
}
RETURN properties(r) AS props
