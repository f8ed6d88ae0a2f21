// Bookkeeping of applied migrations: one node per migration file.
CREATE CONSTRAINT schema_migration_version IF NOT EXISTS
FOR (m:SchemaMigration) REQUIRE m.version IS UNIQUE;
