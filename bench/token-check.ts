import autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import type { Runtime } from '../src/runtime.js';
import { median } from './harness.js';

export interface TokenCheckResult {
  /** Requests per second of each round, the token check as it is. */
  after: number[];
  /** The same with the previous check emulated: signature and a Neo4j read on every request. */
  before: number[];
  ratio: number;
}

async function throughput(base: string, token: string, paths: string[], seconds: number): Promise<number> {
  const result = await autocannon({
    url: base,
    connections: 8,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors during the throughput run`);
  }
  return result.requests.average;
}

/**
 * Throughput of an authenticated `GET /v1/principals/{id}`, with the token checked as it is now
 * (in memory: a verified token remembered, revocations followed through the change feed) and
 * with the check as it was before (every request verified the signature again and read the
 * token's record from Neo4j), alternating the two in the same run.
 */
export async function measureTokenCheck(
  runtime: Runtime,
  base: string,
  token: string,
  principalIds: string[],
  options: { rounds: number; seconds: number },
): Promise<TokenCheckResult> {
  const verifier = runtime.services.verifier;
  const current = verifier.verify.bind(verifier);
  const previous = async (presented: string) => {
    const context = await current(presented);
    const decoded = jwt.decode(presented, { complete: true });
    const key = await runtime.services.keys.verificationKey(String(decoded?.header.kid));
    jwt.verify(presented, key!.publicKey, { algorithms: [key!.alg] });
    await runtime.db.run(
      {
        name: 'bench/previous_token_check',
        text: 'MATCH (t:AccessToken {jti: $jti}) RETURN t.status AS status',
      },
      { jti: context.tokenId },
    );
    return context;
  };
  const paths = principalIds.slice(0, 1_000).map((id) => `/v1/principals/${id}`);
  const after: number[] = [];
  const before: number[] = [];
  // A short run of each first, so that both start warm.
  for (const verify of [previous, current]) {
    verifier.verify = verify;
    await throughput(base, token, paths, 2);
  }
  try {
    for (let round = 0; round < options.rounds; round += 1) {
      // Alternating which goes first keeps drift (JIT, caches, other load) out of the ratio.
      const order = round % 2 === 0 ? (['after', 'before'] as const) : (['before', 'after'] as const);
      for (const variant of order) {
        verifier.verify = variant === 'after' ? current : previous;
        (variant === 'after' ? after : before).push(await throughput(base, token, paths, options.seconds));
      }
    }
  } finally {
    verifier.verify = current;
  }
  return { after, before, ratio: median(after) / median(before) };
}
