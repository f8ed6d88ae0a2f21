// Where decision $id may be: the batches whose id range covers it, found by the index on
// `first_id` among the batches that started at most a batch's span before it ($from), and a
// decision recorded as a node of its own (how decisions were stored before batches, kept
// readable until retention removes them).
CALL () {
  MATCH (b:DecisionBatch)
  WHERE b.first_id >= $from AND b.first_id <= $id AND b.last_id >= $id
  RETURN b.body AS body, null AS record
  UNION ALL
  MATCH (d:Decision {id: $id})
  RETURN null AS body, d.record AS record
}
RETURN body, record
