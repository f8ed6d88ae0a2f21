// Ends a run of a periodic task: the next one is due one period after this one started.
MATCH (s:Schedule {name: $name})
WHERE s.lease_owner = $owner
SET s.next_run_at = datetime($startedAt) + duration({milliseconds: $everyMs}),
    s.last_run_at = datetime($startedAt),
    s.last_error = $error,
    s.lease_owner = null,
    s.lease_until = null
RETURN s.next_run_at AS nextRunAt
