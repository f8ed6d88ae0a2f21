// Reads a principal under its write lock (SET then REMOVE leaves nothing behind), so that
// concurrent updates of one principal are serialised and If-Match checks are exact.
MATCH (p:Principal {id: $id})
SET p.locking = true
REMOVE p.locking
RETURN properties(p) AS props
