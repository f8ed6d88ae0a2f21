UNWIND $rows AS row
CREATE (g:Group {
  id: row.id,
  name: row.name,
  name_key: 'api:' + toLower(row.name),
  description: row.description,
  source: 'api',
  created_at: datetime(row.createdAt),
  created_by: row.createdBy,
  updated_at: datetime(row.createdAt)
})
RETURN count(g) AS created
