// Creates the first admin client only on a store without any client. The lock node makes
// instances that start together take turns, so exactly one of them creates it.
MERGE (l:Lock {name: 'bootstrap-client'})
SET l.touched_at = datetime()
WITH l
OPTIONAL MATCH (existing:Client)
WITH count(existing) AS clients
WHERE clients = 0
CREATE (c:Client {
  id: $id,
  name: $name,
  name_key: $nameKey,
  scopes: $scopes,
  status: 'active',
  secret_hash: $secretHash,
  created_at: datetime(),
  created_by: 'system'
})
RETURN c.id AS id
