// The number of the last committed change: what instances poll to learn about changes made
// elsewhere.
OPTIONAL MATCH (s:Sequence {name: 'events'})
RETURN coalesce(s.value, 0) AS head
