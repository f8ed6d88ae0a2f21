// Principals by id, each under its write lock (SET then REMOVE leaves nothing behind).
UNWIND $ids AS id
MATCH (p:Principal {id: id})
SET p.locking = true
REMOVE p.locking
RETURN properties(p) AS props
