// Delegations are edges between principals: (delegator)-[:DELEGATES_TO]->(delegate), found by
// their id, and the active ones by when they expire (the expiry sweep).
CREATE CONSTRAINT delegation_id IF NOT EXISTS FOR ()-[d:DELEGATES_TO]-() REQUIRE d.id IS UNIQUE;
CREATE INDEX delegation_status_expiry IF NOT EXISTS FOR ()-[d:DELEGATES_TO]-() ON (d.status, d.expires_at);
