MATCH (p:Principal)
WHERE p.status = 'active'
RETURN count(p) AS total
