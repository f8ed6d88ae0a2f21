UNWIND $ids AS id
MATCH (g:Group {id: id})
RETURN g.id AS id, g.name AS name, [(g)-[:MEMBER_OF]->(parent:Group) | parent.id] AS parents
