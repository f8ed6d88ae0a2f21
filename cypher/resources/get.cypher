MATCH (r:Resource {type: $type, identifier: $identifier})
RETURN properties(r) AS props
