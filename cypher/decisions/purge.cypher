// Decisions past retention, oldest first: ids are ULIDs, so an id range is a time range.
MATCH (d:Decision)
WHERE d.id < $before
WITH d
LIMIT $batch
DELETE d
RETURN count(*) AS removed
