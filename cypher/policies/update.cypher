// A full replacement: the next version, recorded as a version node of its own. The policy
// becomes active again (activated_at) when it moves to `active` from another status. Its window
// is replaced too (a bound left out is no bound), and whether its close was recorded is
// forgotten: the new window is open or yet to open, and its close is recorded anew (and its
// opening, when it is yet to open).
MATCH (pol:Policy {id: $id})
WITH pol, pol.status <> 'active' AND $props.status = 'active' AS activating
SET pol += $props,
    pol.valid_from = datetime($window.valid_from),
    pol.valid_until = datetime($window.valid_until),
    pol.expired_recorded_at = null,
    pol.opening_due = CASE WHEN datetime($window.valid_from) > datetime($now) THEN true END,
    pol.version = pol.version + 1,
    pol.activated_at = CASE WHEN activating THEN datetime($now) ELSE pol.activated_at END,
    pol.updated_at = datetime($now),
    pol.updated_by = $actor
CREATE (pol)-[:HAS_VERSION]->(:PolicyVersion {
  policy_id: $id,
  version: pol.version,
  body: $body,
  status: $props.status,
  created_at: datetime($now),
  created_by: $actor
})
RETURN properties(pol) AS props
