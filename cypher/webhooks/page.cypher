MATCH (w:Webhook)
WHERE $status IS NULL OR w.status = $status
WITH w
ORDER BY w.created_at DESC, w.id DESC
SKIP $skip
LIMIT $limit
RETURN w {.id, .url, .events, .description, .status, .created_at, .created_by, .updated_at, .last_delivery_at, .failure_count, .failing_since, .disabled_at, .disabled_reason, .secret_rotated_at} AS webhook
