// Every nesting of a group inside another takes this lock first, so that two concurrent
// nestings cannot each pass the cycle and depth checks and together form a cycle.
MERGE (l:Lock {name: 'group-nesting'})
SET l.touched_at = datetime()
RETURN l.name AS name
