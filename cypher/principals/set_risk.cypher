UNWIND $rows AS row
MATCH (p:Principal {id: row.id})
SET p.risk_score = row.score, p.risk_factors = row.factors, p.version = p.version + 1
RETURN count(p) AS updated
