// A batch of recorded decisions from one instance: one node for up to a mebibyte of records,
// written in one statement. `body` is the records as JSON lines (each beginning with its id),
// gzip-compressed, in base64; `first_id` and `last_id` bound the ids it holds (ULIDs, so also a time range),
// `first_at` and `last_at` the decision times, `count` and `allowed` what a reader in Neo4j
// Browser looks for first.
CREATE (:DecisionBatch {
  first_id: $first_id,
  last_id: $last_id,
  first_at: datetime($first_at),
  last_at: datetime($last_at),
  count: $count,
  allowed: $allowed,
  encoding: 'jsonl+gzip+base64',
  body: $body
})
