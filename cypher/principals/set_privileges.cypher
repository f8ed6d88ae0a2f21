// The privilege factors of principals' risk (src/risk/privileges.ts), with the score and
// factors they make; only rows whose stored privilege factors differ are written.
UNWIND $rows AS row
MATCH (p:Principal {id: row.id})
WHERE coalesce(p.privilege_factors, '[]') <> row.privileges
SET p.privilege_factors = row.privileges,
    p.risk_score = row.score,
    p.risk_factors = row.factors,
    p.version = p.version + 1
RETURN count(p) AS updated
