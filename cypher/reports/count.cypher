MATCH (r:Report)
WHERE ($type IS NULL OR r.type = $type) AND ($status IS NULL OR r.status = $status)
RETURN count(r) AS total
