// The risk of the principals of $ids as stored, for the report rows made from the decision index:
// the risk upkeep (src/risk/) writes it without a change event, so the index may hold an older one.
UNWIND $ids AS id
MATCH (p:Principal {id: id})
RETURN p.id AS id, p.risk_score AS score, p.risk_factors AS factors
