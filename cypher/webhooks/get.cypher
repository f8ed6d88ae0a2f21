MATCH (w:Webhook {id: $id})
RETURN w {.id, .url, .events, .description, .status, .created_at, .created_by, .updated_at, .last_delivery_at, .failure_count, .failing_since, .disabled_at, .disabled_reason, .secret_rotated_at} AS webhook
