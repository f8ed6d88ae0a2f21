// Sets the fields a client may change. Enabling a webhook starts it afresh: its failure count, the
// time since which it has been failing and its wait for the receiver are forgotten.
MATCH (w:Webhook {id: $id})
SET w.url = $url,
    w.events = $events,
    w.description = $description,
    w.updated_at = datetime()
FOREACH (_ IN CASE WHEN $status <> w.status THEN [1] ELSE [] END |
  SET w.status = $status,
      w.disabled_at = CASE WHEN $status = 'disabled' THEN datetime() END,
      w.disabled_reason = CASE WHEN $status = 'disabled' THEN $reason END,
      w.failure_count = CASE WHEN $status = 'active' THEN 0 ELSE w.failure_count END,
      w.failing_since = CASE WHEN $status = 'active' THEN null ELSE w.failing_since END,
      w.retry_at = CASE WHEN $status = 'active' THEN null ELSE w.retry_at END)
RETURN w {.id, .url, .events, .description, .status, .created_at, .created_by, .updated_at, .last_delivery_at, .failure_count, .failing_since, .disabled_at, .disabled_reason, .secret_rotated_at} AS webhook
