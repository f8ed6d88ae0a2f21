// What creating a user needs to know, in one round trip: a deprovisioned user holding the new
// user's externalId gives it up; the manager the new user names (its SCIM id, else the
// externalId of a user of the same connector); and the users already waiting for the new user
// as their manager (named by $id or $externalId).
CALL () {
  OPTIONAL MATCH (old:Principal {connector_source: $source, connector_id: $externalId})
  WHERE old.status IN ['deprovisioned', 'deleted']
  REMOVE old.connector_id
  RETURN count(old) AS released
}
OPTIONAL CALL () {
  MATCH (m:Principal {id: $ref})
  WHERE m.connector_source = $source AND m.type = 'USER' AND m.status IN ['active', 'suspended']
  RETURN m, 0 AS rank
  UNION
  MATCH (m:Principal {connector_id: $ref})
  WHERE m.connector_source = $source AND m.type = 'USER' AND m.status IN ['active', 'suspended']
  RETURN m, 1 AS rank
}
WITH released, m
ORDER BY rank
LIMIT 1
RETURN m.id AS managerId,
  COLLECT {
    MATCH (r:Principal)
    WHERE r.manager_ref IN [$id, $externalId] AND r.connector_source = $source
      AND r.status IN ['active', 'suspended']
    RETURN r.id
  } AS waiting
