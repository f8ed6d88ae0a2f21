// The groups principals are direct members of, each with when it was joined (epoch
// milliseconds), for the decision index to follow a change of memberships alone; ids that no
// longer exist give no row.
UNWIND $ids AS id
MATCH (p:Principal {id: id})
RETURN p.id AS id, [(p)-[m:MEMBER_OF]->(g:Group) | [g.id, m.added_at.epochMillis]] AS groups
