MATCH (p:Principal)
WHERE p.status IN ['active', 'suspended'] AND ($nonUser = false OR p.type <> 'USER')
RETURN count(p) AS total
