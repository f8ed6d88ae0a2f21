// Access changes (docs/access-history.md): one node per principal and resource whose allowed
// actions a committed change moved. Read by principal, by resource, by cause and by time, in id
// order (ids are ordered as the changes were recorded); purged by time.
// Ids are ULIDs the recorder hands out in order, unique by construction: a range index (cheaper
// to keep than a uniqueness constraint) serves the cursor.
CREATE INDEX access_change_id IF NOT EXISTS FOR (c:AccessChange) ON (c.id);
CREATE INDEX access_change_principal IF NOT EXISTS FOR (c:AccessChange) ON (c.principal_id);
CREATE INDEX access_change_resource IF NOT EXISTS FOR (c:AccessChange) ON (c.resource_type, c.identifier);
CREATE INDEX access_change_cause IF NOT EXISTS FOR (c:AccessChange) ON (c.cause_event_id);
CREATE INDEX access_change_at IF NOT EXISTS FOR (c:AccessChange) ON (c.at);
// An `access.changed` webhook message, found by its id when a delivery is due.
CREATE INDEX access_change_message_id IF NOT EXISTS FOR (a:AccessChangeMessage) ON (a.id);
// Policies whose window is yet to open, found by the sweep that records each opening.
CREATE INDEX policy_opening_due IF NOT EXISTS FOR (p:Policy) ON (p.opening_due, p.valid_from);
