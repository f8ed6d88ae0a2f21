// Forgets finished jobs after the retention period.
MATCH (j:Job)
WHERE j.finished_at < datetime($before)
WITH j LIMIT $batch
DETACH DELETE j
RETURN count(*) AS removed
