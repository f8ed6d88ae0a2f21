// Soft delete: the node stays (decision records and audit events name it) with its versions,
// gives its name up and takes effect no more; policies/relink removes its edges.
MATCH (pol:Policy {id: $id})
SET pol.status = 'deleted',
    pol.name_key = null,
    pol.version = pol.version + 1,
    pol.updated_at = datetime($now),
    pol.updated_by = $actor,
    pol.deleted_at = datetime($now),
    pol.deleted_by = $actor
CREATE (pol)-[:HAS_VERSION]->(:PolicyVersion {
  policy_id: $id,
  version: pol.version,
  body: $body,
  status: 'deleted',
  created_at: datetime($now),
  created_by: $actor
})
RETURN properties(pol) AS props
