// Principals that left their source (a provisioning snapshot no longer lists them): deprovisioned.
// They stay for history; the properties the source kept to find them (user_name, manager_ref)
// go, so the source no longer sees them.
UNWIND $rows AS row
MATCH (p:Principal {id: row.id})
REMOVE p:Active:Suspended, p.user_name, p.manager_ref
SET p:Deprovisioned
SET p.status = 'deprovisioned', p.version = p.version + 1, p.updated_at = datetime($now),
  p.risk_score = row.score, p.risk_factors = row.factors
