// Reads a group under its write lock (SET then REMOVE leaves nothing behind), so that
// concurrent changes of one group, its name or its members, are serialised. No member count:
// most writers do not need it, and it grows with the group.
MATCH (g:Group {id: $id})
SET g.locking = true
REMOVE g.locking
RETURN g {
  .id, .name, .description, .source, .connector_source, .connector_id, .created_at, .created_by, .updated_at
} AS group
