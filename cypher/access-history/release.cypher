// Gives the recorder's lease up at a graceful stop, so that another instance takes it at once.
MATCH (l:AccessHistoryLease {name: 'recorder', holder: $holder})
SET l.holder = null, l.until = null
