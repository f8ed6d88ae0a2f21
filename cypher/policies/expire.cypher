// Records that the window of each policy of $ids has closed, once: each is read again under its
// write lock, so a policy another run marked meanwhile, or one a replacement gave another window
// or status, is left alone. One row per policy marked.
UNWIND $ids AS id
MATCH (pol:Policy {id: id})
SET pol._lock = true
REMOVE pol._lock
WITH pol
WHERE pol.status = 'active' AND pol.valid_until <= datetime($now) AND pol.expired_recorded_at IS NULL
SET pol.expired_recorded_at = datetime($now)
RETURN pol.id AS id, pol.valid_until AS valid_until
