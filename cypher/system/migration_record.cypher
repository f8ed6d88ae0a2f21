MERGE (m:SchemaMigration {version: $version})
ON CREATE SET m.name = $name, m.checksum = $checksum, m.applied_at = datetime()
RETURN m.version AS version
