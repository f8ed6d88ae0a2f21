// Where the owners of non-USER principals stand: the principals named in $ids, and those whose
// `meta.owner` is one of $refs (ids, and emails of USER principals, of principals that changed).
// The owner is `meta.owner`: a principal id, or else the email of a USER principal (a living one
// first when several share it). `state` is null while the owner lives (or none is named: that
// is NO_OWNER, read from the principal itself), else `missing`, `deprovisioned` or `deleted`.
CALL () {
  UNWIND $ids AS id
  MATCH (p:Principal {id: id})
  RETURN p
  UNION
  UNWIND $refs AS ref
  MATCH (p:Principal)
  WHERE p.`meta.owner` = ref
  RETURN p
}
WITH DISTINCT p
WHERE p.type <> 'USER' AND p.status <> 'deleted'
WITH p, p.`meta.owner` AS ref
CALL (ref) {
  OPTIONAL MATCH (byId:Principal {id: ref})
  WITH byId
  RETURN coalesce(byId, head(COLLECT {
    MATCH (u:Principal {email: ref})
    WHERE u.type = 'USER'
    RETURN u ORDER BY CASE u.status WHEN 'active' THEN 0 WHEN 'suspended' THEN 1 ELSE 2 END, u.id
  })) AS owner
}
WITH p, CASE
  WHEN ref IS NULL THEN null
  WHEN owner IS NULL THEN 'missing'
  WHEN owner.status IN ['deprovisioned', 'deleted'] THEN owner.status
  ELSE null
END AS state
WHERE coalesce(p.owner_state, '') <> coalesce(state, '')
RETURN p.id AS id, state
