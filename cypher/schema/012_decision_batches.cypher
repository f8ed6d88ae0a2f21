// Decisions are recorded in batches, one node per batch of records (cypher/decisions/record.cypher):
// found by id through the range of ids each batch holds, and purged by it.
CREATE INDEX decision_batch_first_id IF NOT EXISTS FOR (b:DecisionBatch) ON (b.first_id);
