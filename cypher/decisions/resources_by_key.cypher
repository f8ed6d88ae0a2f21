// Resources as they are now (the shape of decisions/index_resources); unregistered or missing
// ones give no row.
UNWIND $refs AS ref
MATCH (r:Resource {type: ref.type, identifier: ref.identifier})
WHERE r.registered
RETURN r.type AS type, r.identifier AS identifier,
  [k IN keys(r) WHERE k STARTS WITH 'attr.' | [substring(k, 5), r[k]]] AS attributes
