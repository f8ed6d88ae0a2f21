// Access changes in the order they were recorded (oldest first). Filters are appended by the
// access-history repository from a fixed set of predicates.
MATCH (c:AccessChange)
WHERE true /*FILTERS*/
WITH c
ORDER BY c.id
SKIP $skip
LIMIT $limit
RETURN c {.*} AS change
