// Active policies whose window has opened by $now and whose opening is not recorded yet (it was
// yet to open when the policy was written), the earliest first, at most $limit: policies/open
// marks them under their locks.
MATCH (pol:Policy)
WHERE pol.opening_due = true AND pol.status = 'active' AND pol.valid_from <= datetime($now)
WITH pol
ORDER BY pol.valid_from, pol.id
LIMIT $limit
RETURN collect(pol.id) AS ids
