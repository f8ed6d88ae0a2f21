MATCH (p:Principal {id: $id})
RETURN properties(p) AS props
