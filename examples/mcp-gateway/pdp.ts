import type { Evaluation } from './mapping.js';

/** An AuthZEN decision; the service puts the recorded decision's id and its reasons in `context`. */
export interface Decision {
  decision: boolean;
  context?: { id?: string; reasons?: { code: string; message?: string }[]; [key: string]: unknown };
}

/** The gateway's own access token to the service; `renew` asks for a new one (the last was refused). */
export type TokenSource = (options?: { renew?: boolean }) => Promise<string>;

/** Evaluations the service takes in one `/access/v1/evaluations` request. */
const MAX_BATCH = 1000;

/**
 * Tokens by the OAuth 2.0 client credentials grant at the service's token endpoint, for an API
 * client holding `decisions:evaluate`. A token is reused until a minute before it expires, and
 * concurrent requests share one grant.
 */
export function clientCredentials(options: {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs?: number;
}): TokenSource {
  const endpoint = new URL('/v1/auth/token', options.baseUrl);
  const basic = Buffer.from(
    `${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`,
  ).toString('base64');
  let current: { token: string; until: number } | undefined;
  let pending: Promise<{ token: string; until: number }> | undefined;
  const grant = async (): Promise<{ token: string; until: number }> => {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'decisions:evaluate' }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
    });
    if (!res.ok) throw new Error(`the token endpoint answered ${res.status}: ${await res.text()}`);
    const body = (await res.json()) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string') throw new Error('the token endpoint gave no access_token');
    const lifetime = typeof body.expires_in === 'number' ? body.expires_in : 60;
    return { token: body.access_token, until: Date.now() + Math.max(lifetime - 60, lifetime / 2) * 1000 };
  };
  return async ({ renew = false } = {}) => {
    if (!renew && current && Date.now() < current.until) return current.token;
    pending ??= grant().finally(() => (pending = undefined));
    current = await pending;
    return current.token;
  };
}

const isDecision = (value: unknown): value is Decision =>
  typeof value === 'object' && value !== null && typeof (value as Decision).decision === 'boolean';

/**
 * The service's AuthZEN Access Evaluation APIs, as the gateway's policy decision point. Anything
 * but a well-formed answer is an error, which the gateway turns into a refusal: it fails closed.
 */
export class AuthZenClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: TokenSource,
    private readonly timeoutMs = 5_000,
  ) {}

  async evaluate(evaluation: Evaluation): Promise<Decision> {
    const answer = await this.post('/access/v1/evaluation', evaluation);
    if (!isDecision(answer)) throw new Error('the decision point gave no decision');
    return answer;
  }

  /** One decision per evaluation, in order. */
  async evaluateAll(evaluations: readonly Evaluation[]): Promise<Decision[]> {
    const out: Decision[] = [];
    for (let at = 0; at < evaluations.length; at += MAX_BATCH) {
      const batch = evaluations.slice(at, at + MAX_BATCH);
      const answer = (await this.post('/access/v1/evaluations', { evaluations: batch })) as {
        evaluations?: unknown;
      };
      const decisions = answer.evaluations;
      if (!Array.isArray(decisions) || decisions.length !== batch.length || !decisions.every(isDecision)) {
        throw new Error('the decision point gave no decision for every evaluation');
      }
      out.push(...decisions);
    }
    return out;
  }

  private async post(path: string, body: unknown): Promise<unknown> {
    for (const renew of [false, true]) {
      const res = await fetch(new URL(path, this.baseUrl), {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${await this.token({ renew })}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      // A token revoked (or signed with a retired key) before it expired: one more try with a new one.
      if (res.status === 401 && !renew) {
        await res.body?.cancel();
        continue;
      }
      if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      return res.json();
    }
    throw new Error(`${path} refused the gateway's token`);
  }
}
