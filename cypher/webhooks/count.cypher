MATCH (w:Webhook)
WHERE $status IS NULL OR w.status = $status
RETURN count(w) AS total
