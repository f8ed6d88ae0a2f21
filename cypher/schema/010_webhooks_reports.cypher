// Webhooks, their outbox (one entry per event still to deliver to a webhook) and the log of
// delivery attempts. Entries and attempts name their webhook and event by id rather than by
// relationship: every committing change adds entries, and a relationship would take a lock on the
// webhook node, so that all writes of the service would queue on it.
CREATE CONSTRAINT webhook_id IF NOT EXISTS FOR (w:Webhook) REQUIRE w.id IS UNIQUE;
CREATE INDEX webhook_status IF NOT EXISTS FOR (w:Webhook) ON (w.status);
CREATE INDEX webhook_message_id IF NOT EXISTS FOR (m:WebhookMessage) ON (m.id);
CREATE INDEX webhook_message_order IF NOT EXISTS FOR (m:WebhookMessage) ON (m.webhook_id, m.occurred_at);
CREATE INDEX webhook_message_due IF NOT EXISTS FOR (m:WebhookMessage) ON (m.webhook_id, m.next_attempt_at);
CREATE CONSTRAINT webhook_delivery_id IF NOT EXISTS FOR (d:WebhookDelivery) REQUIRE d.id IS UNIQUE;
CREATE INDEX webhook_delivery_log IF NOT EXISTS FOR (d:WebhookDelivery) ON (d.webhook_id, d.attempted_at);
CREATE INDEX webhook_delivery_attempted IF NOT EXISTS FOR (d:WebhookDelivery) ON (d.attempted_at);
// Audit reports and the pieces of their files, in order (gzip, as byte arrays).
CREATE CONSTRAINT report_id IF NOT EXISTS FOR (r:Report) REQUIRE r.id IS UNIQUE;
CREATE INDEX report_requested_at IF NOT EXISTS FOR (r:Report) ON (r.requested_at);
CREATE INDEX report_chunk_seq IF NOT EXISTS FOR (c:ReportChunk) ON (c.report_id, c.seq);
CREATE INDEX principal_meta_owner IF NOT EXISTS FOR (p:Principal) ON (p.`meta.owner`);
