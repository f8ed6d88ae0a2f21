// Where the delegations an AI agent holds stand, with the risk score and factors it makes; only
// rows whose stored state differs are written.
UNWIND $rows AS row
MATCH (p:Principal {id: row.id})
WHERE coalesce(p.delegation_state, '') <> coalesce(row.state, '')
SET p.delegation_state = row.state,
    p.risk_score = row.score,
    p.risk_factors = row.factors,
    p.version = p.version + 1
RETURN count(p) AS updated
