UNWIND $rows AS row
MATCH (p:Principal {id: row.id})
MATCH (m:Principal {id: row.managerId})
MERGE (p)-[:REPORTS_TO]->(m)
RETURN count(*) AS linked
