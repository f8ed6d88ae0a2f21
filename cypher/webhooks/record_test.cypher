// The attempt of a test delivery: it goes into the log like any other, and changes nothing else.
WITH $delivery AS attempt
CREATE (d:WebhookDelivery)
SET d = attempt {.*, attempted_at: datetime(attempt.attempted_at), next_attempt_at: null}
