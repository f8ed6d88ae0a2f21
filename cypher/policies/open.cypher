// Records that the window of each policy of $ids has opened, once: each is read again under its
// write lock, so a policy another run marked meanwhile, or one a replacement gave another window
// or status, is left alone. One row per policy marked.
UNWIND $ids AS id
MATCH (pol:Policy {id: id})
SET pol._lock = true
REMOVE pol._lock
WITH pol
WHERE pol.opening_due = true AND pol.status = 'active' AND pol.valid_from <= datetime($now)
REMOVE pol.opening_due
RETURN pol.id AS id, pol.valid_from AS valid_from
