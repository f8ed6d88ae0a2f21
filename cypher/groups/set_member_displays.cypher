// The display text a SCIM client sent with members of a group, kept on their membership edges; a
// null display removes it (the member's own name shows again). Members that are not in the group
// are passed over.
MATCH (g:Group {id: $groupId})
UNWIND $rows AS row
CALL (g, row) {
  MATCH (p:Principal {id: row.id})-[r:MEMBER_OF]->(g)
  RETURN r
  UNION
  MATCH (sub:Group {id: row.id})-[r:MEMBER_OF]->(g)
  RETURN r
}
SET r.scim_display = row.display
