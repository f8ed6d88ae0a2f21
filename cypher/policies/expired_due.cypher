// Active policies whose window has closed by $now and whose close is not recorded yet, the
// earliest closes first, at most $limit: policies/expire marks them under their locks.
MATCH (pol:Policy)
WHERE pol.status = 'active' AND pol.valid_until <= datetime($now) AND pol.expired_recorded_at IS NULL
WITH pol
ORDER BY pol.valid_until, pol.id
LIMIT $limit
RETURN collect(pol.id) AS ids
