// The lease of the one instance that stores access changes. It is taken when free, expired, or
// already held by the caller, and renewed by taking it again.
MERGE (l:AccessHistoryLease {name: 'recorder'})
WITH l
WHERE l.holder IS NULL OR l.holder = $holder OR l.until < datetime($now)
SET l.holder = $holder, l.until = datetime($now) + duration({milliseconds: $leaseMs})
RETURN l.holder AS holder
