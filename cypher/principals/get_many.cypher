// Principals by id, each under its write lock (SET then REMOVE leaves nothing behind), without
// the search card and a connector's SCIM body, which the risk updaters that read them never use.
UNWIND $ids AS id
MATCH (p:Principal {id: id})
SET p.locking = true
REMOVE p.locking
RETURN p {.*, card: null, scim: null} AS props
