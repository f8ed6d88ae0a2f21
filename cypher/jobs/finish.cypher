// Ends a run of a job this instance holds: completed, failed, or back to pending (a retry at
// $runAt, or a release on shutdown so that another instance takes it at once).
MATCH (j:Job {id: $id})
WHERE j.lease_owner = $owner
SET j.status = $status,
    j.error = $error,
    j.run_at = CASE WHEN $runAt IS NULL THEN j.run_at ELSE datetime($runAt) END,
    j.attempts = CASE WHEN $release THEN j.attempts - 1 ELSE j.attempts END,
    j.finished_at = CASE WHEN $status IN ['completed', 'failed'] THEN datetime($now) END,
    j.lease_owner = null,
    j.lease_until = null
RETURN j.id AS id
