MATCH (w:Webhook {id: $id})
RETURN w {.id, .url, .status, .secret_sealed, .previous_secret_sealed, .previous_secret_until} AS webhook
