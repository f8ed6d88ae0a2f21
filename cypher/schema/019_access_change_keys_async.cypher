// The full-text index of access-change parts (018) made eventually consistent: a transaction that
// keys parts commits without applying the index's updates, which Neo4j applies beside it, so the
// commits after it do not wait for them either. A part is found through the index only once
// the recorder has waited for them (cypher/access-history/settle_keys.cypher); until then it is
// still read as unkeyed.
DROP INDEX access_change_keys IF EXISTS;
CREATE FULLTEXT INDEX access_change_keys IF NOT EXISTS
FOR (p:AccessChangeKeyed) ON EACH [p.principals, p.resources]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword', `fulltext.eventually_consistent`: true}};
