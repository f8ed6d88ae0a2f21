// Takes the write lock on the refresh token first, so that two concurrent uses of the same
// token are serialised and the second sees the first one's rotation.
MATCH (r:RefreshToken {hash: $hash})
SET r.last_presented_at = datetime()
RETURN r.hash AS hash
