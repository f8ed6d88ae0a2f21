// Parts are found by principal through a short key of each principal's id (the last six
// characters of the id, `principal_keys`, each key once a part) rather than through the whole id.
// The full-text index's terms dictionary compresses the suffixes of terms that share a prefix
// longer than two characters and are longer than six: every principal id shares `prn_`, so each
// refresh and each segment merge compressed every block of ids again, which cost Neo4j more CPU
// than storing the parts did. Six characters of an id's random part are short enough to be
// written as they are; two principals whose ids end alike share a key, and a read checks each
// change's principal after (keyed.cypher).
// Parts stored before get their keys first, a few at a time, then the index is made again over
// them.
MATCH (p:AccessChangePart)
WHERE p.principal_keys IS NULL
CALL (p) {
  UNWIND p.principals AS id
  WITH p, collect(DISTINCT right(id, 6)) AS keys
  SET p.principal_keys = keys
} IN TRANSACTIONS OF 200 ROWS;
DROP INDEX access_change_keys IF EXISTS;
CREATE FULLTEXT INDEX access_change_keys IF NOT EXISTS
FOR (p:AccessChangeKeyed) ON EACH [p.principal_keys, p.resources]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword', `fulltext.eventually_consistent`: true}};
