// The next page of active principals, whose access the review lists, in id order after the last
// one read.
MATCH (p:Principal)
WHERE p.id > $after AND p.status = 'active'
WITH p
ORDER BY p.id
LIMIT $limit
WITH collect(p.id) AS ids
RETURN size(ids) AS scanned, last(ids) AS last, ids AS rows
