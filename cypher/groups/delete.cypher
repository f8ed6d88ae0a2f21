// Hard delete: the group goes with its memberships, both its members' and its own in other
// groups. The number of members and the parent groups are returned for the audit trail, which
// keeps the group's id and name.
MATCH (g:Group {id: $id})
OPTIONAL MATCH (g)-[:MEMBER_OF]->(parent:Group)
WITH g, collect(parent.id) AS groups
WITH g, groups, COUNT { (m)-[:MEMBER_OF]->(g) WHERE NOT m:Deleted } AS members
DETACH DELETE g
RETURN groups, members
