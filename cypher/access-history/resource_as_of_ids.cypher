// The ids of some parts' changes (`$parts`: their `last_id`), for the changes
// `resource_as_of.cypher` found in parts whose bounds overlap, to tell which came first.
MATCH (p:AccessChangePart)
WHERE p.last_id IN $parts
RETURN p.last_id AS part, p.ids AS ids
