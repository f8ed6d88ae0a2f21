MATCH (c:Client)
WHERE c.status IN $statuses
RETURN count(c) AS total
