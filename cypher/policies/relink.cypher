// Makes the policy's edges say what its properties say: APPLIES_TO each subject principal and
// group that exists, and ALLOWS or DENIES (by its effect) each resource it names exactly, whose
// (:Resource) node is created when new. Edges it had before go first; a resource that no policy
// names any more and nobody registered goes with them. A deleted policy ($link false) keeps none.
MATCH (pol:Policy {id: $id})
CALL (pol) {
  MATCH (pol)-[e:APPLIES_TO]->()
  DELETE e
}
CALL (pol) {
  MATCH (pol)-[e:ALLOWS|DENIES]->(r:Resource)
  DELETE e
  WITH DISTINCT r
  WHERE NOT r.registered AND NOT EXISTS { (:Policy)-[:ALLOWS|DENIES]->(r) }
  DETACH DELETE r
}
CALL (pol) {
  UNWIND CASE WHEN $link THEN pol.subject_principals ELSE [] END AS pid
  MATCH (p:Principal {id: pid})
  CREATE (pol)-[:APPLIES_TO]->(p)
}
CALL (pol) {
  UNWIND CASE WHEN $link THEN pol.subject_groups ELSE [] END AS gid
  MATCH (g:Group {id: gid})
  CREATE (pol)-[:APPLIES_TO]->(g)
}
CALL (pol) {
  UNWIND CASE WHEN $link THEN $exact ELSE [] END AS ref
  MERGE (r:Resource {type: ref.type, identifier: ref.identifier})
    ON CREATE SET r.registered = false, r.created_at = datetime($now), r.updated_at = datetime($now)
  CREATE (pol)-[:$(CASE WHEN pol.effect = 'allow' THEN 'ALLOWS' ELSE 'DENIES' END) {actions: pol.actions}]->(r)
}
RETURN pol.id AS id
