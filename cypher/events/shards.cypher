// Every shard of the event sequence, so that no transaction has to create one as it commits.
UNWIND $shards AS shard
MERGE (s:Sequence {name: CASE shard WHEN 0 THEN 'events' ELSE 'events.' + shard END})
  ON CREATE SET s.value = 0
SET s.shard = shard
