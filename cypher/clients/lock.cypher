// Reads a client under its write lock (SET then REMOVE leaves nothing behind), so that
// concurrent deletions are serialised.
MATCH (c:Client {id: $id})
SET c.locking = true
REMOVE c.locking
RETURN c {.id, .name, .scopes, .status} AS client
