// Makes parts stored unkeyed (record.cypher) `:AccessChangeKeyed`, which the full-text index of
// principals and resources covers: at most $parts of them. The index is eventually consistent
// (schema 019): this commits without applying its updates, so the writes beside it do not wait
// for them. A keyed part stays `:AccessChangeUnkeyed`, and is read as one, until the recorder
// (src/access-history/recorder.ts) has waited for the index to hold it (settle_keys.cypher).
MATCH (u:AccessChangeUnkeyed)
WHERE NOT u:AccessChangeKeyed
WITH u LIMIT $parts
SET u:AccessChangeKeyed
RETURN count(u) AS keyed
