// Every group with the groups it is nested in directly.
MATCH (g:Group)
RETURN g.id AS id, g.name AS name, [(g)-[:MEMBER_OF]->(parent:Group) | parent.id] AS parents
