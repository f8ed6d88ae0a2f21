// When the access history began: the first time an instance took the recorder's lease.
MATCH (l:AccessHistoryLease {name: 'recorder'})
RETURN l.began_at AS began
