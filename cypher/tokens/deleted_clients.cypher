// Clients deleted recently enough that tokens issued to them may still be presented.
MATCH (c:Client)
WHERE c.status = 'deleted' AND c.deleted_at > datetime($since)
RETURN c.id AS id, c.deleted_at AS deletedAt
