// Principals by id, each under its write lock (SET then REMOVE leaves nothing behind), with only
// what their risk score reads (RISK_READS in src/principals/model.ts): the risk updaters read
// hundreds at a time, and a narrow row is quick to decode.
UNWIND $ids AS id
MATCH (p:Principal {id: id})
SET p.locking = true
REMOVE p.locking
RETURN [
  p.id, p.type, p.status, p.last_login, p.owner_state, p.delegation_state, p.privilege_factors,
  [key IN $attributes | p['attr.' + key]],
  [key IN $metadata | p['meta.' + key]]
] AS r
