UNWIND $ids AS id
MATCH (pol:Policy {id: id})
RETURN properties(pol) AS props
