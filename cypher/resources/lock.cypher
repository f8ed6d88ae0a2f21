// The resource under its write lock, created unregistered when new; `created` says whether it
// was. Its properties come back as they were before this write.
MERGE (r:Resource {type: $type, identifier: $identifier})
  ON CREATE SET r.registered = false, r.created_at = datetime($now), r.updated_at = datetime($now), r._new = true
WITH r, r._new IS NOT NULL AS created
REMOVE r._new
SET r._lock = true
REMOVE r._lock
RETURN properties(r) AS props, created
