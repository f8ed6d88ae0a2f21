// Forgets access changes older than the retention, a slice at a time.
MATCH (c:AccessChange)
WHERE c.at < datetime($before)
WITH c LIMIT $limit
DELETE c
RETURN count(*) AS purged
