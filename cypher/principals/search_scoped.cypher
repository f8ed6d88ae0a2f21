// Principal search within one connector's users (src/principals/search/scoped.ts): the users
// whose connector_ref is $scope.ref, active or suspended (those SCIM sees), with created_at in
// $scope.created and updated_at in $scope.updated (one of them the whole time line; $scope.field
// names the other), in creation order, ties broken on id. This is what a SCIM list of Users asks
// with no filter or a filter on meta.lastModified or meta.created. The text is the same for every
// such query; the query is in $scope, the page in $skip, $limit and $window (= skip + limit), its
// rows the users' records, or their ids when $ids says so.
//
// Indexes of User nodes by connector (cypher/schema/014_connector_user_ranges.cypher) hold both
// timestamps, one ordered after the other: (connector_ref, updated_at, created_at) and
// (connector_ref, created_at, updated_at). Deprovisioned and deleted principals by connector have
// small indexes of their own. Nothing here reads a node but to look at its status label, and that
// only for the few left out and for the rows of the page.
// 1. The total: the users in the range, counted in the index of $scope.field, less the
//    deprovisioned and deleted ones in the range.
// 2. The page is read from the created_at index in order, testing updated_at against the value
//    the index holds, and stops after skip + limit matches; what it reads before the first match
//    is wasted, so it starts as late as is safe: with a range on created_at, there; with one on
//    updated_at, at the earliest created_at of the users in that range (no match is created
//    before it), read from their index entries; or at the beginning, when the matches are nearly
//    every user, for then those outside the range, all that stands before the first match, are
//    fewer to step over than the matches are to read.
//    Which, before counting: the share of the connector's time line (its first and last
//    updated_at, two ends of the index) the range covers estimates the share of its users that
//    match. Under 70 %, the count also reads each match's created_at (one pass for both). Else
//    the count reads none, and the matches counted then decide: the users outside the range are
//    at most the users of every connector (a count from the count store) less the total, and
//    stepping over an entry in order costs about six fifths of reading an entry's created_at. A
//    wrong estimate costs time, never a wrong answer.
CYPHER replan=skip
// Open bounds move by a nanosecond, so that every comparison is inclusive.
WITH $scope AS s, COUNT { (:User) } AS population
WITH s, population,
  datetime(s.created.lo) + duration({nanoseconds: s.created.loOpen}) AS createdFrom,
  datetime(s.created.hi) - duration({nanoseconds: s.created.hiOpen}) AS createdTo,
  datetime(s.updated.lo) + duration({nanoseconds: s.updated.loOpen}) AS updatedFrom,
  datetime(s.updated.hi) - duration({nanoseconds: s.updated.hiOpen}) AS updatedTo
CALL (s, updatedFrom, updatedTo) {
  WITH s, updatedFrom, updatedTo
  WHERE s.field = 'updated_at'
  OPTIONAL CALL (s) {
    MATCH (p:User) USING INDEX p:User(connector_ref, updated_at, created_at)
    WHERE p.connector_ref = s.ref AND p.updated_at IS NOT NULL AND p.created_at IS NOT NULL
    WITH p
    ORDER BY p.connector_ref, p.updated_at
    LIMIT 1
    RETURN p.updated_at AS first
  }
  OPTIONAL CALL (s) {
    MATCH (p:User) USING INDEX p:User(connector_ref, updated_at, created_at)
    WHERE p.connector_ref = s.ref AND p.updated_at IS NOT NULL AND p.created_at IS NOT NULL
    WITH p
    ORDER BY p.connector_ref DESC, p.updated_at DESC
    LIMIT 1
    RETURN p.updated_at AS last
  }
  WITH first, last,
    CASE WHEN updatedFrom > first THEN updatedFrom ELSE first END AS from,
    CASE WHEN updatedTo < last THEN updatedTo ELSE last END AS to
  RETURN CASE
      WHEN first IS NULL OR from > to THEN 0.0
      WHEN last = first THEN 1.0
      ELSE toFloat(to.epochMillis - from.epochMillis) / (last.epochMillis - first.epochMillis)
    END < 0.7 AS together
  UNION ALL
  WITH s
  WHERE s.field = 'created_at'
  RETURN false AS together
}
CALL (s, together, createdFrom, createdTo, updatedFrom, updatedTo) {
  WITH s, updatedFrom, updatedTo
  WHERE s.field = 'updated_at' AND together
  CALL (s, updatedFrom, updatedTo) {
    MATCH (p:User) USING INDEX p:User(connector_ref, updated_at, created_at)
    WHERE p.connector_ref = s.ref AND p.updated_at >= updatedFrom AND p.updated_at <= updatedTo
      AND p.created_at IS NOT NULL
    RETURN count(p) AS inRange, min(p.created_at) AS earliest
  }
  RETURN inRange, earliest
  UNION ALL
  WITH s, updatedFrom, updatedTo
  WHERE s.field = 'updated_at' AND NOT together
  CALL (s, updatedFrom, updatedTo) {
    MATCH (p:User) USING INDEX p:User(connector_ref, updated_at, created_at)
    WHERE p.connector_ref = s.ref AND p.updated_at >= updatedFrom AND p.updated_at <= updatedTo
      AND p.created_at IS NOT NULL
    RETURN count(p) AS inRange
  }
  RETURN inRange, null AS earliest
  UNION ALL
  WITH s, createdFrom, createdTo
  WHERE s.field = 'created_at'
  CALL (s, createdFrom, createdTo) {
    MATCH (p:User) USING INDEX p:User(connector_ref, created_at, updated_at)
    WHERE p.connector_ref = s.ref AND p.created_at >= createdFrom AND p.created_at <= createdTo
      AND p.updated_at IS NOT NULL
    RETURN count(p) AS inRange
  }
  RETURN inRange, createdFrom AS earliest
}
CALL (s, createdFrom, createdTo, updatedFrom, updatedTo) {
  CALL (s, createdFrom, createdTo, updatedFrom, updatedTo) {
    MATCH (p:Deprovisioned) USING INDEX p:Deprovisioned(connector_ref, updated_at, created_at)
    WHERE p.connector_ref = s.ref AND p.updated_at >= updatedFrom AND p.updated_at <= updatedTo
      AND p.created_at >= createdFrom AND p.created_at <= createdTo AND p:User
    RETURN count(p) AS deprovisioned
  }
  CALL (s, createdFrom, createdTo, updatedFrom, updatedTo) {
    MATCH (p:Deleted) USING INDEX p:Deleted(connector_ref, updated_at, created_at)
    WHERE p.connector_ref = s.ref AND p.updated_at >= updatedFrom AND p.updated_at <= updatedTo
      AND p.created_at >= createdFrom AND p.created_at <= createdTo AND p:User
    RETURN count(p) AS deleted
  }
  RETURN deprovisioned + deleted AS leftOut
}
WITH s, population, earliest, createdFrom, createdTo, updatedFrom, updatedTo, inRange - leftOut AS total
CALL (s, population, total, earliest, createdFrom, updatedFrom, updatedTo) {
  WITH s, updatedFrom, updatedTo
  WHERE earliest IS NULL AND 6 * (population - total + $window) >= 5 * total
  CALL (s, updatedFrom, updatedTo) {
    MATCH (p:User) USING INDEX p:User(connector_ref, updated_at, created_at)
    WHERE p.connector_ref = s.ref AND p.updated_at >= updatedFrom AND p.updated_at <= updatedTo
      AND p.created_at IS NOT NULL
    RETURN min(p.created_at) AS start
  }
  RETURN start
  UNION ALL
  WITH earliest, population, total, createdFrom
  WHERE earliest IS NULL AND 6 * (population - total + $window) < 5 * total
  RETURN createdFrom AS start
  UNION ALL
  WITH earliest
  WHERE earliest IS NOT NULL
  RETURN earliest AS start
}
CALL (s, start, createdTo, updatedFrom, updatedTo) {
  MATCH (p:User) USING INDEX p:User(connector_ref, created_at, updated_at)
  WHERE p.connector_ref = s.ref AND p.created_at >= start AND p.created_at <= createdTo
    AND p.updated_at >= updatedFrom AND p.updated_at <= updatedTo
  // connector_ref is fixed: naming it lets the planner read the order from the index.
  WITH p
  ORDER BY p.connector_ref, p.created_at, p.id
  WHERE p:Active OR p:Suspended
  WITH p
  SKIP $skip
  LIMIT $limit
  RETURN collect(CASE WHEN $ids THEN p.id ELSE properties(p) END) AS rows
}
RETURN total, rows
