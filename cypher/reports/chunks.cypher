// Pieces of a completed report's file in order, a few at a time.
MATCH (c:ReportChunk {report_id: $id})
WHERE c.seq >= $from AND c.seq < $to
RETURN c.data AS data
ORDER BY c.seq
