// The next page of living principals in id order after the last one read, as one row: how many
// were read, the last id read (where the next page starts), and those among them not seen since
// $before (never logged in: not since they were created).
MATCH (p:Principal)
WHERE p.id > $after AND p.status IN ['active', 'suspended']
WITH p
ORDER BY p.id
LIMIT $limit
WITH collect(p) AS page
RETURN size(page) AS scanned, last(page).id AS last, [p IN page
  WHERE coalesce(p.last_login, p.created_at) < datetime($before) | {
    id: p.id, type: p.type, name: p.name, email: p.email, status: p.status,
    connector_source: p.connector_source, owner: p.`meta.owner`, last_login: p.last_login,
    created_at: p.created_at, risk_score: p.risk_score
  }] AS rows
