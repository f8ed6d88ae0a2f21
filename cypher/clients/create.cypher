CREATE (c:Client {
  id: $id,
  name: $name,
  name_key: $nameKey,
  scopes: $scopes,
  status: 'active',
  secret_hash: $secretHash,
  created_at: datetime(),
  created_by: $createdBy
})
RETURN c {.id, .name, .scopes, .status, .created_at, .created_by} AS client
