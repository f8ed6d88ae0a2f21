// USER principals whose last login has just crossed the dormancy threshold but whose stored
// risk does not say so yet (time passing is a risk input no write announces).
MATCH (p:User)
WHERE p.last_login < datetime($dormantBefore)
  AND p.status <> 'deleted'
  AND NOT p.risk_factors CONTAINS '"DORMANT"'
RETURN properties(p) AS props
LIMIT $batch
