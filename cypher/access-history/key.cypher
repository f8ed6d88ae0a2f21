// Makes parts stored unkeyed (record.cypher) `:AccessChangeKeyed`, which the full-text index of
// principals and resources covers: at most $parts of them. The index is eventually consistent
// (schema 019): this commits without applying its updates, so the writes beside it do not wait
// for them. A keyed part stays `:AccessChangeUnkeyed`, and is read as one, until the recorder
// (src/access-history/recorder.ts) has waited for the index to hold it (settle_keys.cypher).
// A part stored without `principal_keys` (by a version from before schema 020, beside this one
// while instances are upgraded) is given them here (the last six characters of each id), so that
// the index finds it by principal.
MATCH (u:AccessChangeUnkeyed)
WHERE NOT u:AccessChangeKeyed
WITH u LIMIT $parts
SET u:AccessChangeKeyed
FOREACH (_ IN CASE WHEN u.principal_keys IS NULL THEN [1] ELSE [] END |
  SET u.principal_keys = [id IN u.principals | right(id, 6)])
RETURN count(u) AS keyed
