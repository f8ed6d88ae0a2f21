// The `access.changed` messages among $ids, each with the part it announces (record.cypher): its
// changes are read from the part's columns when the message is delivered, not stored twice. (A
// message an earlier version stored with its data, as `body`, is delivered from that instead:
// webhooks/dispatch_due.cypher reads it.)
MATCH (a:AccessChangeMessage)-[:ANNOUNCES]->(p:AccessChangePart)
WHERE a.id IN $ids
RETURN a.id AS id, a.part AS part, a.parts AS parts,
  p {
    .at, .instants, .ids, .principals, .principal_names, .principal_types, .resource_types,
    .identifiers, .patterns, .gained, .lost, .via, .on_behalf_ids, .on_behalf_names,
    .on_behalf_types, .cause_event_id, .cause_event_type, .actor_type, .actor_id
  } AS announced
