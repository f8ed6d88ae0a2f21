// Extends the leases this instance holds on its running jobs and periodic tasks.
CALL () {
  MATCH (j:Job)
  WHERE j.id IN $jobs AND j.lease_owner = $owner
  SET j.lease_until = datetime($now) + duration({milliseconds: $leaseMs})
  RETURN count(j) AS jobs
}
CALL () {
  MATCH (s:Schedule)
  WHERE s.name IN $schedules AND s.lease_owner = $owner
  SET s.lease_until = datetime($now) + duration({milliseconds: $leaseMs})
  RETURN count(s) AS schedules
}
RETURN jobs, schedules
