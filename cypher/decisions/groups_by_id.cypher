// Groups as they are now (the shape of decisions/index_groups); ids that no longer exist give no row.
UNWIND $ids AS id
MATCH (g:Group {id: id})
RETURN g.id AS id, g.name AS name,
  [(g)-[m:MEMBER_OF]->(parent:Group) | [parent.id, m.added_at.epochMillis]] AS parents
