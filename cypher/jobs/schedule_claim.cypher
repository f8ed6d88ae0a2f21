// Claims a periodic task for one run when it is due and nobody holds it. The write lock taken by
// the first SET makes instances that try at the same moment take turns; the conditions are read
// again under it, so only one of them claims. Returns the next run time either way.
MERGE (s:Schedule {name: $name})
  ON CREATE SET s.next_run_at = datetime($now)
SET s.claiming = true
REMOVE s.claiming
WITH s, s.next_run_at <= datetime($now) AND coalesce(s.lease_until < datetime($now), true) AS due
CALL (s, due) {
  WITH s WHERE due
  SET s.lease_owner = $owner, s.lease_until = datetime($now) + duration({milliseconds: $leaseMs})
}
RETURN due AS claimed, s.next_run_at AS nextRunAt
