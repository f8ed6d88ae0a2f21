// Manager edges of a bulk load (benchmarks and imports), once every manager exists.
UNWIND $rows AS row
MATCH (p:Principal {id: row.id})
MATCH (m:Principal {id: row.managerId})
MERGE (p)-[:REPORTS_TO]->(m)
RETURN count(*) AS linked
