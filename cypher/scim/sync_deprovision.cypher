// Users missing from a snapshot: deprovisioned (they stay for history; SCIM no longer sees them).
UNWIND $rows AS row
MATCH (p:Principal {id: row.id})
REMOVE p:Active:Suspended, p.user_name, p.manager_ref
SET p:Deprovisioned
SET p.status = 'deprovisioned', p.version = p.version + 1, p.updated_at = datetime($now),
  p.risk_score = row.score, p.risk_factors = row.factors
