// The lease of the one instance that stores access changes. It is taken when free, expired, or
// already held by the caller, and renewed by taking it again. The first holder ever marks when
// the history began: `as_of` reaches no further back.
MERGE (l:AccessHistoryLease {name: 'recorder'})
  ON CREATE SET l.began_at = datetime($now)
WITH l
WHERE l.holder IS NULL OR l.holder = $holder OR l.until < datetime($now)
SET l.holder = $holder, l.until = datetime($now) + duration({milliseconds: $leaseMs})
RETURN l.holder AS holder
