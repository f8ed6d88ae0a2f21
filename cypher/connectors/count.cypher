MATCH (c:Connector)
WHERE c.status IN $statuses
RETURN count(c) AS total
