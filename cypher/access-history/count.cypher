// How many access changes a list holds, when only whole parts are filtered (/*PARTS*/; /*KEYED*/
// as in `page.cypher`): each part counts its listed changes.
/*KEYED*/
MATCH (p:AccessChangePart)
WHERE p.listed > 0 /*PARTS*/
RETURN sum(p.listed) AS total
