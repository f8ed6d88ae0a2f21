// Registered resources: their attributes feed conditions, and globs match them. Only what the
// index holds, as text and lists of it.
MATCH (r:Resource:Registered)
RETURN r.type AS type, r.identifier AS identifier,
  [k IN keys(r) WHERE k STARTS WITH 'attr.' | [substring(k, 5), r[k]]] AS attributes
