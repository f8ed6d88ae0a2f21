MATCH (c:Client {id: $id})
RETURN c.status AS status, c.secret_hash AS secretHash, c.scopes AS scopes
