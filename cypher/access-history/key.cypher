// Makes parts stored unkeyed (record.cypher) `:AccessChangeKeyed`, which the full-text index of
// principals and resources covers: at most $parts of them. Neo4j applies a transaction's
// full-text updates as it commits, and commits after it wait for that; so the recorder
// (src/access-history/recorder.ts) keys a few dozen parts a transaction, in turn, after the parts
// waiting to be stored are in, not in the statements that store them: a write arriving meanwhile
// waits for one of these, not for every part a large change stored.
MATCH (u:AccessChangeUnkeyed)
WITH u LIMIT $parts
REMOVE u:AccessChangeUnkeyed
SET u:AccessChangeKeyed
RETURN count(u) AS keyed
