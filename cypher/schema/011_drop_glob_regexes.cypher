// Globs are matched by their literal runs (cypher/access/principal.cypher), no longer by regular
// expressions, which could backtrack without end on hostile patterns: the stored expressions go.
// Committed in batches of its own, touching only policies that still have one, so running it
// again changes nothing.
MATCH (pol:Policy)
WHERE pol.glob_regexes IS NOT NULL
CALL (pol) {
  REMOVE pol.glob_regexes
} IN TRANSACTIONS OF 10000 ROWS;
