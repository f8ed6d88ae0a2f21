// Takes one job under its write lock, re-reading the conditions under the lock so that two
// instances never both claim it.
MATCH (j:Job {id: $id})
SET j.claiming = true
REMOVE j.claiming
WITH j
WHERE j.status IN ['pending', 'running'] AND coalesce(j.lease_until < datetime($now), true)
SET j.status = 'running',
    j.lease_owner = $owner,
    j.lease_until = datetime($now) + duration({milliseconds: $leaseMs}),
    j.attempts = j.attempts + 1,
    j.started_at = coalesce(j.started_at, datetime($now))
RETURN j {.id, .kind, .payload, .attempts, .max_attempts, .progress, .trace_parent} AS job
