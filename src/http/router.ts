import { isDeepStrictEqual } from 'node:util';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import compose from 'koa-compose';
import type { Context, Middleware, Next } from 'koa';
import typeis from 'type-is';
import { AppError, validationFailed } from '../errors/errors.js';
import { JsonBytes, parseJsonBody, Serialised } from '../json.js';
import { freeFormViolation, type FreeFormBounds } from '../schemas/free-form.js';
import {
  compile,
  inputAjv,
  invalidBody,
  responseAjv,
  toFieldErrors,
  type Validator,
} from '../schemas/validator.js';
import { readQuery } from './query.js';
import { FORM_MEDIA_TYPE, jsonMediaTypes, koaPath, type AnyRoute } from './route.js';
import { header, stateOf } from './state.js';
import { textPieces, tooLarge } from './text-pieces.js';

const BODY_LIMIT_BYTES = 1024 * 1024;
/**
 * How deep an AuthZEN body may nest. The schemas bound every value they read, but the members an
 * AuthZEN object may carry unread (the standard asks that unknown members be ignored) would
 * otherwise reach code that walks a request recursively. Twice the nesting of a free-form value,
 * which sits at most four levels down. Other operations' schemas read every member, so their
 * bodies are bounded by the schemas alone.
 */
const MAX_BODY_DEPTH = 32;
const BODY_NESTING: FreeFormBounds = {
  maxDepth: MAX_BODY_DEPTH,
  maxEntries: Infinity,
  maxLength: Infinity,
  reservedKeys: [],
};
/** Paths whose operation is remembered; the memory is emptied beyond. */
const RESOLVED_PATHS = 10_000;

export interface RouteTable {
  /** Koa middleware that runs the operation `resolve` found (it is on the request's state). */
  dispatch: Middleware;
  /**
   * Finds the operation for a request before dispatch (auth and rate limits need it), with its
   * path parameters, once per request.
   */
  resolve(method: string, path: string): Resolution;
  routes: readonly AnyRoute[];
}

/** The operation a request is for, the methods its path allows, and its path parameters. */
export interface Resolution {
  route: AnyRoute | undefined;
  allowed: string[];
  params: Record<string, string>;
}

export interface RouteTableOptions {
  /** Check every response body against its declared schema (on in tests). */
  validateResponses: boolean;
}

/**
 * Builds the router from the operations' specs: per operation, path parameters (a malformed id
 * is simply not found), query and body are validated by schemas compiled once here.
 */
export function buildRouteTable(routes: readonly AnyRoute[], options: RouteTableOptions): RouteTable {
  // The router only matches paths; each operation's chain is composed once, here.
  const router = new Router();
  const byName = new Map<string, AnyRoute>();
  const chains = new Map<AnyRoute, Middleware>();
  const seen = new Set<string>();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key) || byName.has(route.operationId))
      throw new Error(`duplicate operation ${key} / ${route.operationId}`);
    seen.add(key);
    byName.set(route.operationId, route);
    chains.set(route, compose(operationMiddleware(route, options)));
    router.register(koaPath(route.path), [route.method], [async () => {}], { name: route.operationId });
  }
  // Requests to the same path (the decision endpoint above all) skip the walk of every route.
  const resolved = new Map<
    string,
    { route: AnyRoute | undefined; allowed: string[]; params: Record<string, string> }
  >();
  const dispatch: Middleware = async (ctx, next) => {
    const state = stateOf(ctx);
    const chain = state.route && chains.get(state.route);
    if (!chain) {
      await next();
      return;
    }
    ctx.params = state.params ?? {};
    await chain(ctx, next);
  };
  return {
    dispatch,
    routes,
    resolve(method, path) {
      const key = `${method} ${path}`;
      const known = resolved.get(key);
      if (known) return known;
      const found = resolveAnew(method, path);
      if (resolved.size >= RESOLVED_PATHS) resolved.clear();
      resolved.set(key, found);
      return found;
    },
  };

  function resolveAnew(method: string, path: string): Resolution {
    const match = router.match(path, method);
    const layer = match.pathAndMethod.find((l) => l.methods.length > 0);
    const allowed = [...new Set(match.path.flatMap((l) => l.methods))];
    const route = layer?.name ? byName.get(layer.name) : undefined;
    const params = route && layer ? layer.params(path, layer.captures(path)) : {};
    return { route, allowed, params };
  }
}

function operationMiddleware(route: AnyRoute, options: RouteTableOptions): Middleware[] {
  const chain: Middleware[] = [];
  if (route.params) {
    const check = compile(inputAjv, route.params);
    chain.push(async (ctx, next) => {
      const params = { ...(ctx.params as Record<string, string>) };
      if (!check(params)) throw new AppError('NOT_FOUND', `${ctx.path} does not exist`);
      const state = stateOf(ctx);
      state.input = { ...state.input, params };
      await next();
    });
  }
  if (route.query) {
    const schema = route.query;
    const check = compile(inputAjv, schema);
    chain.push(async (ctx, next) => {
      const { values: query, errors } = readQuery(schema, ctx.query);
      const valid = check(query);
      if (errors.length > 0 || !valid) {
        // Parameters that could not be read are left out of `query`: only their own error counts.
        const unread = new Set(errors.map((e) => e.pointer));
        const invalid = toFieldErrors(check.errors, '/query').filter((e) => !unread.has(e.pointer));
        throw validationFailed('invalid query parameters', [...errors, ...invalid]);
      }
      const state = stateOf(ctx);
      state.input = { ...state.input, query };
      await next();
    });
  }
  if (route.textBody) chain.push(textBodyMiddleware(route.textBody));
  else if (route.body) chain.push(...bodyMiddleware(route));
  chain.push(handlerMiddleware(route, options));
  return chain;
}

function bodyMiddleware(route: AnyRoute): Middleware[] {
  const kinds = route.bodyTypes ?? ['json'];
  const required = route.bodyRequired ?? true;
  const check = compile(inputAjv, route.body!);
  const jsonTypes = kinds.includes('json') ? jsonMediaTypes(route) : [];
  const parse = bodyParser({
    enableTypes: [...kinds],
    // Exactly the JSON types the operation takes (a compressed body, or one in another charset).
    extendTypes: { json: jsonTypes },
    jsonLimit: BODY_LIMIT_BYTES,
    formLimit: BODY_LIMIT_BYTES,
    jsonStrict: true,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],
    // Parse errors are rethrown so the error middleware maps them (400, 413, 415).
    onError: (err: Error) => {
      throw err;
    },
  }) as unknown as Middleware;

  const accepts = (media: Media): boolean =>
    jsonTypes.includes(media.type) || (media.type === FORM_MEDIA_TYPE && kinds.includes('form'));
  const acceptable = [...jsonTypes, ...(kinds.includes('form') ? [FORM_MEDIA_TYPE] : [])].join(' or ');

  /** Checks the body read (or its absence) against the operation's schema, then goes on. */
  const validated = async (ctx: Context, next: Next, media: Media | undefined): Promise<void> => {
    const state = stateOf(ctx);
    let body: unknown = state.bodyPresent ? (ctx.request as { body?: unknown }).body : undefined;
    if (body === undefined) {
      if (required)
        throw validationFailed('a request body is required', [{ pointer: '', message: 'is required' }]);
    } else if (route.bodyAsBytes) {
      // Read by the body parser (compressed, or in another charset): handed on as UTF-8 bytes,
      // checked where the rest are.
      body = new JsonBytes(Buffer.from(JSON.stringify(body), 'utf8'));
    } else {
      if (media?.type === FORM_MEDIA_TYPE) body = normaliseForm(body);
      route.bodyGuard?.(body);
      // ajv reads no deeper than the schema does, so it is safe on any body; the walk after it
      // covers what an AuthZEN schema lets through unread.
      if (!check(body)) throw invalidBody(check);
      const tooDeep = route.errors === 'authzen' ? freeFormViolation(body, BODY_NESTING) : undefined;
      if (tooDeep) throw validationFailed('the request body is nested too deeply', [tooDeep]);
    }
    state.input = { ...state.input, body };
    await next();
  };

  const body: Middleware = async (ctx, next) => {
    const length = Number(header(ctx, 'content-length') || '0');
    if (length > BODY_LIMIT_BYTES) throw tooLarge(BODY_LIMIT_BYTES);
    if (!typeis.hasBody(ctx.req) || (length === 0 && !header(ctx, 'transfer-encoding'))) {
      stateOf(ctx).bodyPresent = false;
      await validated(ctx, next, undefined);
      return;
    }
    const media = mediaOf(header(ctx, 'content-type'));
    if (!accepts(media)) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `the request body must be ${acceptable}`);
    }
    stateOf(ctx).bodyPresent = true;
    const plain = media.type !== FORM_MEDIA_TYPE && media.utf8 && !encoded(ctx);
    if (plain && route.bodyAsBytes) {
      const state = stateOf(ctx);
      state.input = { ...state.input, body: new JsonBytes(await readBytes(ctx, BODY_LIMIT_BYTES)) };
      await next();
      return;
    }
    if (plain) {
      (ctx.request as { body?: unknown }).body = await readJson(ctx);
      await validated(ctx, next, media);
      return;
    }
    await parse(ctx, () => validated(ctx, next, media));
  };
  return [body];
}

/** What a Content-Type says, as far as reading a body goes. */
interface Media {
  /** The media type alone, lower case, without its parameters (`application/json`). */
  type: string;
  /** No charset, or UTF-8: a JSON body the service reads itself (the body parser takes the rest). */
  utf8: boolean;
}

/** Content-Type values seen, parsed once each; a client inventing new ones empties the memory. */
const mediaSeen = new Map<string, Media>();
const MEDIA_SEEN = 256;

function mediaOf(contentType: string): Media {
  let media = mediaSeen.get(contentType);
  if (media) return media;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase();
  media = {
    type: contentType.split(';')[0]!.trim().toLowerCase(),
    utf8: charset === undefined || charset === 'utf-8' || charset === 'utf8',
  };
  if (mediaSeen.size >= MEDIA_SEEN) mediaSeen.clear();
  mediaSeen.set(contentType, media);
  return media;
}

/** Whether the body comes with a content encoding (compressed): the body parser reads those. */
function encoded(ctx: Context): boolean {
  const encoding = header(ctx, 'content-encoding');
  return encoding !== '' && encoding.toLowerCase() !== 'identity';
}

/** A text body of one of the operation's media types, handed on in pieces as it arrives. */
function textBodyMiddleware(spec: {
  mediaTypes: readonly string[];
  limitBytes: number;
  pieceChars?: number;
}): Middleware {
  return async (ctx, next) => {
    const length = Number(ctx.get('Content-Length') || '0');
    if (length > spec.limitBytes) throw tooLarge(spec.limitBytes);
    if (!typeis(ctx.req, [...spec.mediaTypes])) {
      throw new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        `the request body must be ${spec.mediaTypes.join(' or ')}`,
      );
    }
    const body = textPieces(ctx.req, spec.limitBytes, spec.pieceChars ?? TEXT_PIECE_CHARS);
    const state = stateOf(ctx);
    state.input = { ...state.input, body };
    try {
      await next();
    } finally {
      // A handler that stopped early leaves the rest unread: the connection cannot carry on.
      if (!ctx.req.readableEnded) ctx.set('Connection', 'close');
    }
  };
}

/**
 * Reads a JSON body up to the size limit: an object or an array at the top (as the body parser's
 * strict mode has it), an empty body read as `{}`.
 */
async function readJson(ctx: Context): Promise<unknown> {
  return parseJsonBody((await readBytes(ctx, BODY_LIMIT_BYTES)).toString('utf8'));
}

/** Characters in a piece of a streamed text body. */
const TEXT_PIECE_CHARS = 4 * 1024 * 1024;

/** The request body's bytes, refused past `limit` bytes. */
function readBytes(ctx: Context, limit: number): Buffer | Promise<Buffer> {
  const req = ctx.req;
  // A small request arrives whole in one read from its socket, and the parser has pushed all of
  // its body by the time the body is asked for: take it as it lies, without a round of stream
  // events. (A declared length is all the parser ever pushes.)
  const declared = Number(header(ctx, 'content-length') || -1);
  if (declared >= 0 && declared <= limit && req.readableLength === declared && !req.readableFlowing) {
    const chunks: Buffer[] = [];
    for (let chunk = req.read() as Buffer | null; chunk !== null; chunk = req.read() as Buffer | null) {
      chunks.push(chunk);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onError = (err: Error): void => {
      stop();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        onError(tooLarge(limit));
        req.pause();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onAborted = (): void => onError(new AppError('MALFORMED_JSON', 'the request body ended early'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/** Form bodies parse into a null-prototype object; give them a plain one for the validator. */
function normaliseForm(body: unknown): unknown {
  return body && typeof body === 'object' ? { ...(body as Record<string, unknown>) } : body;
}

function handlerMiddleware(route: AnyRoute, options: RouteTableOptions): Middleware {
  const responseChecks = new Map<number, Validator>();
  if (options.validateResponses) {
    for (const [status, spec] of Object.entries(route.responses)) {
      if (spec.schema) responseChecks.set(Number(status), compile(responseAjv, spec.schema));
    }
  }
  return async (ctx: Context, _next: Next) => {
    const input = stateOf(ctx).input ?? {};
    const result = await route.handler({ params: input.params, query: input.query, body: input.body, ctx });
    if (result === undefined) return;
    const status = result.status ?? 200;
    for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
    ctx.status = status;
    if (result.body !== undefined) {
      const serialised = result.body instanceof Serialised ? result.body : undefined;
      if (options.validateResponses) {
        // Only the checks read a prepared answer's value: parsing it back costs as much as making it.
        const value: unknown = serialised ? serialised.value : result.body;
        const check = responseChecks.get(status);
        if (!check)
          throw new Error(`${route.operationId} answered ${status}, which its spec does not declare`);
        if (!check(value)) {
          throw new Error(
            `${route.operationId} response ${status} breaks its schema: ${JSON.stringify(toFieldErrors(check.errors))}`,
          );
        }
        if (
          serialised &&
          !isDeepStrictEqual(JSON.parse(serialised.text), JSON.parse(JSON.stringify(value)))
        ) {
          throw new Error(`${route.operationId} response ${status}: its prepared JSON is not its value`);
        }
      }
      const contentType = route.responses[status]?.contentType;
      if (serialised) {
        // The type first: Koa types a text body as text/plain unless one is set already.
        ctx.type = typeof contentType === 'string' ? contentType : 'application/json; charset=utf-8';
        ctx.body = serialised.json;
      } else {
        ctx.body = result.body;
        if (typeof contentType === 'string') ctx.type = contentType;
      }
    }
  };
}
