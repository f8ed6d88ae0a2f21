// Principal → group memberships.
UNWIND $rows AS row
MATCH (g:Group {id: row.groupId})
MATCH (p:Principal {id: row.memberId})
CREATE (p)-[:MEMBER_OF {added_at: datetime(row.addedAt), added_by: row.addedBy}]->(g)
RETURN count(*) AS linked
