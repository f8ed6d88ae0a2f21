// What names this database for the decision index's snapshot: its id and when it was created, so
// that a snapshot of another database (or of one made again) is never read as this one's.
CALL db.info() YIELD id, creationDate
RETURN id + '/' + toString(creationDate) AS id
