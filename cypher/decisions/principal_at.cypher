// The id of the principal at a position of the id order: where one range of the index's read
// ends and the next begins.
MATCH (p:Principal)
WITH p.id AS id
ORDER BY id
SKIP $skip
LIMIT 1
RETURN id
