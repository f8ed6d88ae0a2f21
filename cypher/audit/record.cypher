CREATE (e:AuditEvent {
  id: $id,
  type: $type,
  occurred_at: datetime($occurredAt),
  actor_type: $actorType,
  actor_id: $actorId,
  target_type: $targetType,
  target_id: $targetId,
  outcome: $outcome,
  request_id: $requestId,
  source_ip: $sourceIp,
  user_agent: $userAgent,
  reason: $reason,
  changes: $changes
})
RETURN e.id AS id
