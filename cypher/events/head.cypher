// The number of the last committed change of each event sequence shard: what instances poll to
// learn about changes made elsewhere.
MATCH (s:Sequence)
WHERE s.name = 'events' OR s.name STARTS WITH 'events.'
RETURN coalesce(s.shard, 0) AS shard, s.value AS head
