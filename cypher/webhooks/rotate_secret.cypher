// The new secret signs from now on; the previous one keeps signing too until $overlapUntil, so
// receivers can switch without dropping a delivery.
MATCH (w:Webhook {id: $id})
SET w.previous_secret_sealed = w.secret_sealed,
    w.previous_secret_until = datetime($overlapUntil),
    w.secret_sealed = $secretSealed,
    w.secret_rotated_at = datetime(),
    w.updated_at = datetime()
RETURN w.id AS id
