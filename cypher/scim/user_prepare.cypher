// What creating a user needs to know, in one round trip: the manager the new user names (its SCIM
// id, else the externalId of a user of the same connector, by its id) and the users already
// waiting for the new user as their manager (named by $id or $externalId). An externalId that
// several of the connector's users share names none of them: as a manager it resolves to nobody,
// and the new user's externalId wakes no waiting report when another user of the connector holds
// it already.
WITH
  COLLECT {
    MATCH (m:Principal {id: $ref})
    WHERE m.connector_ref = $connector AND m.type = 'USER' AND m.status IN ['active', 'suspended']
    RETURN m.id
  } AS byId,
  COLLECT {
    MATCH (m:Principal {connector_id: $ref})
    WHERE m.connector_ref = $connector AND m.type = 'USER' AND m.status IN ['active', 'suspended']
    RETURN m.id
  } AS byExternalId,
  EXISTS {
    MATCH (o:Principal {connector_id: $externalId})
    WHERE o.connector_ref = $connector AND o.type = 'USER' AND o.status IN ['active', 'suspended']
  } AS shared
RETURN CASE WHEN size(byId) > 0 THEN byId[0] WHEN size(byExternalId) = 1 THEN byExternalId[0] END AS managerId,
  COLLECT {
    MATCH (r:Principal)
    WHERE r.manager_ref IN CASE WHEN shared THEN [$id] ELSE [$id, $externalId] END
      AND r.connector_ref = $connector AND r.status IN ['active', 'suspended']
    RETURN r.id
  } AS waiting
