MATCH (d:Decision {id: $id})
RETURN d.record AS record
