// How many access changes a list holds, when changes are filtered one by one (/*ROWS*/ over the
// columns of `page.cypher`, /*PARTS*/ and /*KEYED*/ as there).
/*KEYED*/
MATCH (p:AccessChangePart)
WHERE p.listed > 0 /*PARTS*/
WITH p, p.ids AS ids, p.principals AS principals, p.resource_types AS types, p.identifiers AS identifiers,
  p.gained AS gained, p.lost AS lost, p.instants AS instants
RETURN sum(size([i IN range(0, size(ids) - 1) WHERE (gained[i] <> '' OR lost[i] <> '') /*ROWS*/])) AS total
