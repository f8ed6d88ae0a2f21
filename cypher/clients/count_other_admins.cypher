MATCH (c:Client {status: 'active'})
WHERE 'clients:admin' IN c.scopes AND c.id <> $id
RETURN count(c) AS admins
