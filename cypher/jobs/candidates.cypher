// Jobs this instance could run now: due, of a kind it handles, and not leased (a running job
// whose lease ran out belongs to an instance that stopped renewing it).
MATCH (j:Job)
WHERE j.run_at <= datetime($now)
  AND j.status IN ['pending', 'running']
  AND j.kind IN $kinds
  AND coalesce(j.lease_until < datetime($now), true)
RETURN j.id AS id
ORDER BY j.run_at
LIMIT $limit
