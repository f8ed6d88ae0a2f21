// Principal search written for one shape of query (src/principals/search/shaped.ts), for shapes that are
// planned (src/principals/search/plans.ts); every other search runs principals/search. The
// compiler inserts generated text at the /*MARKERS*/: fixed predicates and whitelisted property
// names only; every value it compares with is a parameter.
// ANCHOR and PATTERN may start the match at an attribute value node (the Attribute index);
// FILTERS hold the predicates for that pattern (with the Principal label when there is no
// anchor: only principals link to attribute values), SCAN_FILTERS the same conditions on the
// principal alone.
//
// The matches are collected once: their number is the total. The page comes from one of two
// branches, chosen by a guard on the total: when matches are dense along the sort order, an
// ordered index scan stops after skip + limit of them; otherwise the collected matches are
// sorted, keeping skip + limit (Top). Ties break on id. The rows are the principals' records, or
// their ids when $ids says so.
CALL () {
  /*ANCHOR*/
  MATCH (p) /*PATTERN*/
  WHERE true /*FILTERS*/
  RETURN collect(/*DISTINCT*/ p) AS matches
}
CALL () {
  RETURN COUNT { (:Principal) } AS population
}
WITH matches, size(matches) AS total, population
CALL (matches, total, population) {
  WITH total, population
  WHERE $window * population < total * total
  CALL (total) {
    MATCH (p:Principal) /*HINT*/
    WHERE true /*SCAN_FILTERS*/
    WITH p
    ORDER BY /*ORDER*/ p.id /*DIRECTION*/
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH matches, total, population
  WHERE NOT ($window * population < total * total)
  CALL (matches) {
    UNWIND matches AS p
    WITH p
    ORDER BY /*ORDER*/ p.id /*DIRECTION*/
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
}
// Only the branch whose guard held produced a row.
WITH total, collect(rows) AS pages
RETURN total, reduce(acc = [], page IN pages | acc + page) AS rows
