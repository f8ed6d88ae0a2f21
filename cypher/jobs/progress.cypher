MATCH (j:Job {id: $id})
WHERE j.lease_owner = $owner
SET j.progress = $progress
RETURN j.id AS id
