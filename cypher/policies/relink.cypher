// Makes the policy's edges say what its properties say: APPLIES_TO each subject principal and
// group that exists, and ALLOWS or DENIES (by its effect) each resource it names exactly, whose
// (:Resource) node is created when new. An APPLIES_TO edge stays while its subject does, and
// `since` says when it came (the access traversal dates grants from it); resource edges are made
// anew, and a resource that no policy names any more and nobody registered goes with them. A
// deleted policy ($link false) keeps no edge.
MATCH (pol:Policy {id: $id})
CALL (pol) {
  MATCH (pol)-[e:APPLIES_TO]->(s)
  WHERE NOT $link OR NOT s.id IN coalesce(pol.subject_principals, []) + coalesce(pol.subject_groups, [])
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
  MERGE (pol)-[e:APPLIES_TO]->(p)
    ON CREATE SET e.since = datetime($now)
}
CALL (pol) {
  UNWIND CASE WHEN $link THEN pol.subject_groups ELSE [] END AS gid
  MATCH (g:Group {id: gid})
  MERGE (pol)-[e:APPLIES_TO]->(g)
    ON CREATE SET e.since = datetime($now)
}
CALL (pol) {
  UNWIND CASE WHEN $link THEN $exact ELSE [] END AS ref
  MERGE (r:Resource {type: ref.type, identifier: ref.identifier})
    ON CREATE SET r.registered = false, r.created_at = datetime($now), r.updated_at = datetime($now)
  CREATE (pol)-[:$(CASE WHEN pol.effect = 'allow' THEN 'ALLOWS' ELSE 'DENIES' END) {actions: pol.actions}]->(r)
}
RETURN pol.id AS id
