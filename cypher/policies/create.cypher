// A new policy and its first version. $props holds the body as node properties
// (src/policies/model.ts) but for its window, $window, whose bounds are stored as datetimes (a
// null bound stores nothing); its subjects and resources are linked by policies/relink. A window
// yet to open is marked `opening_due` until its opening is recorded (policies/open).
CREATE (pol:Policy {id: $id})
SET pol += $props,
    pol.valid_from = datetime($window.valid_from),
    pol.valid_until = datetime($window.valid_until),
    pol.opening_due = CASE WHEN datetime($window.valid_from) > datetime($now) THEN true END,
    pol.version = 1,
    pol.activated_at = CASE WHEN $props.status = 'active' THEN datetime($now) END,
    pol.created_at = datetime($now),
    pol.created_by = $actor,
    pol.updated_at = datetime($now),
    pol.updated_by = $actor
CREATE (pol)-[:HAS_VERSION]->(:PolicyVersion {
  policy_id: $id,
  version: 1,
  body: $body,
  status: $props.status,
  created_at: datetime($now),
  created_by: $actor
})
RETURN properties(pol) AS props
