// The batches that may hold decisions recorded after $after and before $until, in the order they
// start: found by the index on `first_id`, from $from (a batch's span before $after: a batch
// holding a later decision starts no earlier) up to $until. The first $batches come with their
// bodies; one more comes with its `first_id` alone, so that the reader knows every decision below
// it is among the bodies it has (src/decisions/record-list.ts).
MATCH (b:DecisionBatch)
WHERE b.first_id >= $from AND b.first_id < $until AND b.last_id > $after
WITH b
ORDER BY b.first_id
LIMIT $batches + 1
WITH collect(b) AS found
UNWIND range(0, size(found) - 1) AS i
RETURN found[i].first_id AS first_id, CASE WHEN i < $batches THEN found[i].body END AS body
