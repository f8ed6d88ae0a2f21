// Time-bound policies keep their window as datetimes (valid_from, valid_until). The expiry sweep
// (cypher/policies/expired_due.cypher) looks for active policies whose window has closed: by
// status, then by when the window closes.
CREATE INDEX policy_status_valid_until IF NOT EXISTS FOR (p:Policy) ON (p.status, p.valid_until);
