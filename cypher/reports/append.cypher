// Stores the next piece of the file with how far the report has got, in one transaction: a run
// that resumes continues right after the last piece stored, so no row is lost or written twice.
MATCH (r:Report {id: $id})
WHERE r.status = 'running' AND r.chunks = $seq
CREATE (:ReportChunk {report_id: $id, seq: $seq, data: $data})
SET r.chunks = $seq + 1,
    r.cursor = $cursor,
    r.row_count = $rowCount,
    r.bytes = r.bytes + $bytes,
    r.total = $total,
    r.progress = $progress,
    r.scanned = $scanned,
    r.exhausted = $exhausted
RETURN r.chunks AS chunks
