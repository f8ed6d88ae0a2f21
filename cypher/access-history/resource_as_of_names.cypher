// What the history names some principals (gone from the graph since) in the parts holding their
// changes: `$wanted`, each a part (its `last_id`) and where their changes stand in it. Each part
// is read once.
UNWIND $wanted AS w
MATCH (p:AccessChangePart {last_id: w.part})
WITH w.at AS at, p.principals AS principals, p.principal_names AS names, p.principal_types AS types
RETURN [i IN at | principals[i]] AS ids, [i IN at | names[i]] AS names, [i IN at | types[i]] AS types
