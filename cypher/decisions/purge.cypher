// Decisions past retention, oldest first: ids are ULIDs, so an id range is a time range. A batch
// goes once its newest decision is past; decisions stored as nodes of their own go one by one.
CALL () {
  MATCH (b:DecisionBatch)
  WHERE b.first_id < $before AND b.last_id < $before
  WITH b
  LIMIT $batch
  DELETE b
  RETURN count(*) AS removed
  UNION ALL
  MATCH (d:Decision)
  WHERE d.id < $before
  WITH d
  LIMIT $batch
  DELETE d
  RETURN count(*) AS removed
}
RETURN sum(removed) AS removed
