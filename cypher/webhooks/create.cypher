CREATE (w:Webhook {
  id: $id,
  url: $url,
  events: $events,
  description: $description,
  status: 'active',
  secret_sealed: $secretSealed,
  created_at: datetime(),
  created_by: $createdBy,
  updated_at: datetime(),
  failure_count: 0
})
RETURN w {.id, .url, .events, .description, .status, .created_at, .created_by, .updated_at, .last_delivery_at, .failure_count, .failing_since, .disabled_at, .disabled_reason, .secret_rotated_at} AS webhook
