// Group → group memberships (nesting).
UNWIND $rows AS row
MATCH (g:Group {id: row.groupId})
MATCH (n:Group {id: row.memberId})
CREATE (n)-[:MEMBER_OF {added_at: datetime(row.addedAt), added_by: row.addedBy}]->(g)
RETURN count(*) AS linked
