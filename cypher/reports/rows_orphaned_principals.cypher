// The next page of living non-USER principals in id order after the last one read, as one row:
// how many were read, the last id read (where the next page starts), and those among them
// without a living owner. The owner is `meta.owner`: a principal id, or else the email of a USER
// principal (a living one first when several share it).
MATCH (p:Principal)
WHERE p.id > $after AND p.type <> 'USER' AND p.status IN ['active', 'suspended']
WITH p
ORDER BY p.id
LIMIT $limit
WITH p, p.`meta.owner` AS ref
CALL (p, ref) {
  OPTIONAL MATCH (byId:Principal {id: ref})
  WITH byId
  RETURN coalesce(byId, head(COLLECT {
    MATCH (u:Principal {email: ref})
    WHERE u.type = 'USER'
    RETURN u ORDER BY CASE u.status WHEN 'active' THEN 0 WHEN 'suspended' THEN 1 ELSE 2 END, u.id
  })) AS owner
}
WITH p, ref, owner, CASE WHEN ref IS NULL THEN 'unset' WHEN owner IS NULL THEN 'missing' ELSE owner.status END AS state
ORDER BY p.id
WITH count(p) AS scanned, last(collect(p.id)) AS last, collect({p: p, ref: ref, owner: owner, state: state}) AS page
RETURN scanned, last, [x IN page WHERE x.state IN ['unset', 'missing', 'deprovisioned', 'deleted'] | {
  id: x.p.id, type: x.p.type, name: x.p.name, status: x.p.status, owner: x.ref,
  owner_state: x.state, owner_id: x.owner.id, owner_name: x.owner.name,
  risk_score: x.p.risk_score, created_at: x.p.created_at
}] AS rows
