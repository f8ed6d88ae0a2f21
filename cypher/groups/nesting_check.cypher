// Whether nesting group $memberId inside group $groupId would close a cycle, and how many
// groups the longest chain through the new edge would hold. Exact only under the nesting lock.
MATCH (g:Group {id: $groupId})
MATCH (m:Group {id: $memberId})
CALL (m) {
  MATCH path = (:Group)-[:MEMBER_OF*0..16]->(m)
  RETURN max(length(path)) AS below
}
CALL (g) {
  MATCH path = (g)-[:MEMBER_OF*0..16]->(:Group)
  RETURN max(length(path)) AS above
}
RETURN g = m OR EXISTS { (g)-[:MEMBER_OF*1..16]->(m) } AS cycle, below + above + 2 AS levels
