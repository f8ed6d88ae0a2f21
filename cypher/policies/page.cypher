// One page of policies, newest first, with the total: $statuses and $effects (null: any) filter.
CALL () {
  MATCH (pol:Policy)
  WHERE pol.status IN $statuses AND ($effect IS NULL OR pol.effect = $effect)
  RETURN count(pol) AS total
}
CALL () {
  MATCH (pol:Policy)
  WHERE pol.created_at IS NOT NULL AND pol.status IN $statuses AND ($effect IS NULL OR pol.effect = $effect)
  WITH pol
  ORDER BY pol.created_at DESC, pol.id DESC
  SKIP $skip
  LIMIT $limit
  RETURN collect(properties(pol)) AS policies
}
RETURN total, policies
