// Background work and the change feed.
// One-off jobs, claimed by one instance at a time under a lease.
CREATE CONSTRAINT job_id IF NOT EXISTS FOR (j:Job) REQUIRE j.id IS UNIQUE;
CREATE INDEX job_run_at IF NOT EXISTS FOR (j:Job) ON (j.run_at);
CREATE INDEX job_finished_at IF NOT EXISTS FOR (j:Job) ON (j.finished_at);
// Periodic tasks that run once per period across all instances.
CREATE CONSTRAINT schedule_name IF NOT EXISTS FOR (s:Schedule) REQUIRE s.name IS UNIQUE;
// Commit-ordered numbering of audit events: the change feed that instances poll.
CREATE CONSTRAINT sequence_name IF NOT EXISTS FOR (s:Sequence) REQUIRE s.name IS UNIQUE;
CREATE INDEX audit_event_seq IF NOT EXISTS FOR (e:AuditEvent) ON (e.seq);
