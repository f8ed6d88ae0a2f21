// Makes every part stored unkeyed (record.cypher) `:AccessChangeKeyed`, which the full-text index
// of principals and resources covers. The index costs about the same in every transaction that
// touches it, whatever it holds, so the recorder pays it once for many parts, after the parts
// waiting to be stored are in (src/access-history/recorder.ts), not in the statements that
// store them.
MATCH (u:AccessChangeUnkeyed)
REMOVE u:AccessChangeUnkeyed
SET u:AccessChangeKeyed
RETURN count(u) AS keyed
