MATCH (p:Principal)
RETURN count(p) AS total
