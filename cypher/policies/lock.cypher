// The policy under its write lock, so that concurrent writes to it take turns and each sees the
// version the other left.
MATCH (pol:Policy {id: $id})
SET pol._lock = true
REMOVE pol._lock
RETURN properties(pol) AS props
