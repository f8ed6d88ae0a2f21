// Principal cards: `card` = [id, name, type, email or ''] on every principal that is not deleted,
// the one property principals/relationships reads per related principal. Principals written
// before cards existed get theirs here. The statement commits in batches of its own (the
// migrator runs each statement in an auto-commit session, where CALL ... IN TRANSACTIONS may
// run), and touches only principals still without a card, so running it again changes nothing.
MATCH (p:Principal)
WHERE p.card IS NULL AND NOT p:Deleted
CALL (p) {
  SET p.card = [p.id, p.name, p.type, coalesce(p.email, '')]
} IN TRANSACTIONS OF 10000 ROWS;
