import type { Context, Middleware } from 'koa';
import type { Config } from '../../config/config.js';
import { BUCKETS, type Bucket, type Quota, type RateLimiter } from '../../ratelimit/index.js';
import { HttpError } from '../problems.js';
import { stateOf } from '../state.js';

/**
 * The bucket a request counts against: the matched operation's, else `standard` for anything
 * under `/v1` (so probing unknown API paths is limited too), else none.
 */
function bucketOf(ctx: Context): Bucket | undefined {
  const route = stateOf(ctx).route;
  if (route) return route.rateLimit === 'none' ? undefined : route.rateLimit;
  return ctx.path.startsWith('/v1/') ? 'standard' : undefined;
}

/**
 * Authenticated callers are counted per client (or, on SCIM, per connector) wherever they connect
 * from; others per address.
 */
function callerKey(ctx: Context): string {
  const connectorId = stateOf(ctx).connector?.id;
  if (connectorId) return `connector:${connectorId}`;
  const clientId = stateOf(ctx).auth?.clientId;
  return clientId ? `client:${clientId}` : `ip:${ctx.ip || 'unknown'}`;
}

function setHeaders(ctx: Context, policy: string, quota: Quota): void {
  const secondsToReset = Math.max(0, Math.ceil((quota.resetAt - Date.now()) / 1000));
  const res = ctx.res;
  res.setHeader('RateLimit-Policy', policy);
  res.setHeader('RateLimit', `"${quota.bucket}";r=${quota.remaining};t=${secondsToReset}`);
  res.setHeader('X-RateLimit-Limit', String(quota.limit));
  res.setHeader('X-RateLimit-Remaining', String(quota.remaining));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(quota.resetAt / 1000)));
}

/**
 * Counts each request against its bucket and reports the quota on the response. The headers are
 * set before the rest of the chain runs, so that error responses produced further down (and
 * turned into problems by the error middleware, which keeps headers already set) carry them too.
 */
export function rateLimit(limiter: RateLimiter, config: Config): Middleware {
  const { windowS, buckets } = config.rateLimits;
  const policies = Object.fromEntries(
    BUCKETS.map((b) => [b, `"${b}";q=${buckets[b]};w=${windowS}`]),
  ) as Record<Bucket, string>;

  return async (ctx, next) => {
    const bucket = bucketOf(ctx);
    if (!bucket) {
      await next();
      return;
    }
    let quota: Quota;
    try {
      quota = await limiter.consume(bucket, callerKey(ctx));
    } catch (err) {
      // Store failures are absorbed by the limiter; should one still escape, serving the request
      // unlimited is better than refusing all traffic because of the limiter.
      stateOf(ctx).log.error({ err, bucket }, 'rate limiter failed; request not counted');
      await next();
      return;
    }
    setHeaders(ctx, policies[bucket], quota);
    if (!quota.allowed) {
      throw new HttpError(
        'RATE_LIMITED',
        `too many requests in the ${bucket} bucket; retry in ${quota.retryAfterS} s`,
        {},
        { retryAfterS: quota.retryAfterS },
      );
    }
    await next();
  };
}
