// The parts that may hold a principal's or a resource's changes: those the full-text index finds
// by `$search` (keyword tokens: `principal_keys:"<the id's last six characters>"`, and
// `principal_keys:"<a prefix of the id>*"` for each prefix, which the parts of a cause reaching
// a large share of the principals have; `resources:"type:identifier"`), and those not keyed yet
// (record.cypher). The unkeyed ones are read first: a part keyed meanwhile is then in the index.
// What a part holds of the principal or resource is checked change by change after (ids that end
// or start alike share a key).
// Inserted at the KEYED marker of the list's statements (from BEGIN to END); as_of has it inline.
/*BEGIN*/
CALL () {
  MATCH (p:AccessChangeUnkeyed)
  RETURN p
  UNION
  CALL db.index.fulltext.queryNodes('access_change_keys', $search) YIELD node AS p
  RETURN p
}
/*END*/
RETURN count(p) AS parts
