// Registered resources: their attributes feed conditions, and globs match them.
MATCH (r:Resource:Registered)
RETURN properties(r) AS props
