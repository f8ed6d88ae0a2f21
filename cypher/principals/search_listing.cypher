// Principal search by type, status and connector source only (GET /principals and the simplest
// searches). src/principals/search.ts inserts the sort and the conditions at the /*MARKERS*/
// (fixed text, whitelisted labels and property names only). $types names every type when none is
// asked for, and then $labels is null; $source is null when no connector source is asked for.
//
// The total reads no property of the matches: label counts come from the count store, or with a
// connector source from its index and the labels; less the principals in the statuses left out
// (the few that are not active), counted from their status labels at LEFT_OUT. FILTERS holds the
// type and status label tests and the connector source. The page is chosen as in
// principals/search.
CALL () {
  WITH $source AS source
  WHERE source IS NULL
  RETURN CASE WHEN 'USER' IN $types THEN COUNT { (:User) } ELSE 0 END
    + CASE WHEN 'SERVICE_ACCOUNT' IN $types THEN COUNT { (:ServiceAccount) } ELSE 0 END
    + CASE WHEN 'API_KEY' IN $types THEN COUNT { (:ApiKey) } ELSE 0 END
    + CASE WHEN 'AI_AGENT' IN $types THEN COUNT { (:AiAgent) } ELSE 0 END AS typed
  UNION ALL
  WITH $source AS source
  WHERE source IS NOT NULL
  CALL (source) {
    MATCH (p:Principal)
    WHERE p.connector_source = source AND ($labels IS NULL OR any(l IN labels(p) WHERE l IN $labels))
    RETURN count(p) AS typed
  }
  RETURN typed
}
CALL () {
  RETURN 0 /*LEFT_OUT*/ AS left_out
}
CALL () {
  RETURN COUNT { (:Principal) } AS population
}
WITH typed - left_out AS total, population
CALL (total, population) {
  WITH total, population
  WHERE $window * population < total * total
  CALL (total) {
    MATCH (p:Principal) /*HINT*/
    WHERE true /*FILTERS*/ /*SCAN_FILTERS*/
    WITH p
    ORDER BY /*ORDER*/ p.id /*DIRECTION*/
    SKIP $skip
    LIMIT $limit
    RETURN collect(properties(p)) AS rows
  }
  RETURN rows
  UNION ALL
  WITH total, population
  WHERE NOT ($window * population < total * total)
  CALL (total) {
    MATCH (p:Principal)
    WHERE true /*FILTERS*/
    WITH p
    ORDER BY /*ORDER*/ p.id /*DIRECTION*/
    SKIP $skip
    LIMIT $limit
    RETURN collect(properties(p)) AS rows
  }
  RETURN rows
}
// Only the branch whose guard held produced a row.
WITH total, collect(rows) AS pages
RETURN total, reduce(acc = [], page IN pages | acc + page) AS rows
