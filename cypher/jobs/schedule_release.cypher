// Gives back a periodic task's run that stopped before it ended (its instance shutting down):
// the task stays due as it was, so another instance runs it at its next look, and no error or
// run is recorded.
MATCH (s:Schedule {name: $name})
WHERE s.lease_owner = $owner
SET s.lease_owner = null,
    s.lease_until = null
