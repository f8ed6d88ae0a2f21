// Creates a new active key unless one newer than $freshAfter exists. The lock node serialises
// instances that start or rotate at the same moment.
MERGE (l:Lock {name: 'signing-keys'})
SET l.touched_at = datetime()
WITH l
OPTIONAL MATCH (a:SigningKey {status: 'active'})
WHERE a.created_at > datetime($freshAfter)
WITH count(a) AS fresh
WHERE fresh = 0
CALL () {
  MATCH (old:SigningKey {status: 'active'})
  SET old.status = 'retired', old.retired_at = datetime()
}
CREATE (k:SigningKey {
  kid: $kid,
  alg: $alg,
  public_jwk: $publicJwk,
  private_key: $privateKey,
  status: 'active',
  created_at: datetime()
})
RETURN k.kid AS kid
