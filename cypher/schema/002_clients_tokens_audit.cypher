// API clients, OAuth token bookkeeping, signing keys and the audit trail.
CREATE CONSTRAINT client_id IF NOT EXISTS FOR (c:Client) REQUIRE c.id IS UNIQUE;
// Set only while a client is active, so a deleted client's name can be reused.
CREATE CONSTRAINT client_name_key IF NOT EXISTS FOR (c:Client) REQUIRE c.name_key IS UNIQUE;
CREATE INDEX client_created_at IF NOT EXISTS FOR (c:Client) ON (c.created_at);
CREATE CONSTRAINT token_family_id IF NOT EXISTS FOR (f:TokenFamily) REQUIRE f.id IS UNIQUE;
CREATE CONSTRAINT access_token_jti IF NOT EXISTS FOR (t:AccessToken) REQUIRE t.jti IS UNIQUE;
CREATE INDEX access_token_expires_at IF NOT EXISTS FOR (t:AccessToken) ON (t.expires_at);
CREATE CONSTRAINT refresh_token_hash IF NOT EXISTS FOR (t:RefreshToken) REQUIRE t.hash IS UNIQUE;
CREATE INDEX refresh_token_expires_at IF NOT EXISTS FOR (t:RefreshToken) ON (t.expires_at);
CREATE CONSTRAINT signing_key_kid IF NOT EXISTS FOR (k:SigningKey) REQUIRE k.kid IS UNIQUE;
CREATE CONSTRAINT lock_name IF NOT EXISTS FOR (l:Lock) REQUIRE l.name IS UNIQUE;
CREATE CONSTRAINT audit_event_id IF NOT EXISTS FOR (e:AuditEvent) REQUIRE e.id IS UNIQUE;
CREATE INDEX audit_event_occurred_at IF NOT EXISTS FOR (e:AuditEvent) ON (e.occurred_at);
CREATE INDEX audit_event_type IF NOT EXISTS FOR (e:AuditEvent) ON (e.type);
CREATE INDEX audit_event_actor IF NOT EXISTS FOR (e:AuditEvent) ON (e.actor_id);
CREATE INDEX audit_event_target IF NOT EXISTS FOR (e:AuditEvent) ON (e.target_id);
