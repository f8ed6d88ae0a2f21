// Waits until the full-text index holds every part keyed so far (key.cypher: its updates are
// applied beside the commits, schema 019), then leaves them `:AccessChangeKeyed` alone: reads
// find them through the index from here on. The recorder keys parts one statement at a time and
// runs this between them, so every part keyed when this begins is one the wait covers.
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
MATCH (u:AccessChangeUnkeyed:AccessChangeKeyed)
REMOVE u:AccessChangeUnkeyed
RETURN count(u) AS settled
