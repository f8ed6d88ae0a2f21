CREATE (c:Connector {
  id: $id,
  name: $name,
  name_key: $nameKey,
  description: $description,
  profile: $profile,
  status: 'active',
  token_hash: $tokenHash,
  created_at: datetime(),
  created_by: $createdBy,
  token_rotated_at: datetime()
})
RETURN c {.id, .name, .description, .profile, .status, .created_at, .created_by, .token_rotated_at} AS connector
