// One page of resources ordered by type, then identifier (the order of the key index), with
// the total; $type and $registered (null: any) filter.
CALL () {
  MATCH (r:Resource)
  WHERE ($type IS NULL OR r.type = $type) AND ($registered IS NULL OR r.registered = $registered)
  RETURN count(r) AS total
}
CALL () {
  MATCH (r:Resource)
  WHERE r.type IS NOT NULL AND r.identifier IS NOT NULL
    AND ($type IS NULL OR r.type = $type) AND ($registered IS NULL OR r.registered = $registered)
  WITH r
  ORDER BY r.type, r.identifier
  SKIP $skip
  LIMIT $limit
  RETURN collect(properties(r)) AS resources
}
RETURN total, resources
