// Policies (with a node per version), the resources they grant on, and recorded decisions.
CREATE CONSTRAINT policy_id IF NOT EXISTS FOR (p:Policy) REQUIRE p.id IS UNIQUE;
// Names are unique among policies that are not deleted, regardless of case: a deleted policy
// gives its name_key up.
CREATE CONSTRAINT policy_name_key IF NOT EXISTS FOR (p:Policy) REQUIRE p.name_key IS UNIQUE;
CREATE INDEX policy_created_at IF NOT EXISTS FOR (p:Policy) ON (p.created_at);
CREATE CONSTRAINT policy_version_key IF NOT EXISTS
FOR (v:PolicyVersion) REQUIRE (v.policy_id, v.version) IS UNIQUE;
// One node per resource a policy names exactly or a client registers; the constraint's index
// also serves glob scans (type equal, identifier by prefix).
CREATE CONSTRAINT resource_key IF NOT EXISTS FOR (r:Resource) REQUIRE (r.type, r.identifier) IS UNIQUE;
// Decision ids are ULIDs, so they also order decisions in time: retention purges by id range.
CREATE CONSTRAINT decision_id IF NOT EXISTS FOR (d:Decision) REQUIRE d.id IS UNIQUE;
