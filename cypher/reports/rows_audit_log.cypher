// The next page of the audit events of [$since, $until), oldest first, after the last one
// written, as one row: how many were read, the last one's time and id (where the next page
// starts) and the events. The index seek starts at the last event written, so each page reads
// only its own events.
MATCH (e:AuditEvent)
WHERE e.occurred_at >= datetime(coalesce($afterAt, $since)) AND e.occurred_at < datetime($until)
  AND ($afterAt IS NULL OR e.occurred_at > datetime($afterAt) OR e.id > $afterId)
WITH e
ORDER BY e.occurred_at, e.id
LIMIT $limit
WITH collect(e) AS page
RETURN size(page) AS scanned, last(page).id AS last, last(page).occurred_at AS lastAt,
       [e IN page | e {.*}] AS rows
