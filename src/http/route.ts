import type { Static, TSchema } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { Scope } from '../vocabulary/scopes.js';
import type { Serialised } from '../json.js';
import type { Bucket } from '../ratelimit/index.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ResponseSpec {
  description: string;
  schema?: TSchema;
  /**
   * Defaults to application/json. Several media types describe a file whose type depends on the
   * resource (a report in CSV or JSON): each is documented without a schema.
   */
  contentType?: string | readonly string[];
  headers?: Record<string, { description: string; schema: TSchema }>;
}

type In<S> = S extends TSchema ? Static<S> : undefined;

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  ctx: Context;
}

/** The responses an operation declares, by status. */
export type Responses = Record<number, ResponseSpec>;

/**
 * What a handler answers, erased: the router holds every operation this way. A handler may also
 * answer `undefined` when it wrote the response on `ctx` itself (a stream, a text format).
 */
export interface RouteResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The body of a response with a schema: its static type, or that type serialised already. */
export type ResponseBody<S> = S extends { schema: infer T extends TSchema }
  ? Static<T> | Serialised<Static<T>>
  : undefined;

/** The body a status takes: its schema's, or none for a status without one (204, redirects). */
type BodyField<Spec> = Spec extends { schema: TSchema } ? { body: ResponseBody<Spec> } : { body?: undefined };

/**
 * The answers an operation's responses allow: one per status declared, its body typed by that
 * status's schema; `status` may be left out for 200. (The status stays the mapped type's own
 * parameter, so a literal status in a handler keeps its literal type.)
 */
export type TypedResult<R extends Responses> =
  | {
      [S in keyof R & number]: { status: S; headers?: Record<string, string> } & BodyField<R[S]>;
    }[keyof R & number]
  | (200 extends keyof R
      ? { status?: undefined; headers?: Record<string, string> } & BodyField<R[200]>
      : never);

interface RouteCommon {
  method: HttpMethod;
  /** OpenAPI-style path, `{name}` for parameters. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /**
   * The one scope the caller's token needs, `public` for unauthenticated operations, or
   * `connector` for the SCIM service provider, whose bearer token is a connector's.
   */
  auth: { scope: Scope } | 'public' | 'connector';
  /** A public operation that still wants to know a bearer-token caller, if there is one. */
  identifiesCaller?: boolean;
  /** Rate-limit bucket; `none` for operational endpoints outside `/v1`. */
  rateLimit: Bucket | 'none';
  /** Media types the body may use (default JSON only). */
  bodyTypes?: readonly ('json' | 'form')[];
  /**
   * A text body (such as JSON lines) read as it arrives, up to its own size limit, and handed to
   * the handler as an `AsyncIterable<string>` of pieces ending at line breaks (of about
   * `pieceChars`, 4 MiB by default), so that no request holds it all in memory; `body` then
   * describes it for the OpenAPI document (typed with `Type.Unsafe`).
   */
  textBody?: { mediaTypes: readonly string[]; limitBytes: number; pieceChars?: number };
  /**
   * A JSON body handed to the handler unparsed, as a `JsonBytes` of its UTF-8 text, once its
   * media type and size are checked: the service parses it and checks it against the schema where
   * it uses it (a batch of decisions, on a decision thread, so that reading a thousand requests
   * does not hold the event loop). `body` is then typed `Type.Unsafe<JsonBytes>`, and
   * `documentedBody` gives the schema the OpenAPI document shows.
   */
  bodyAsBytes?: boolean;
  /** When false, an empty body is accepted and arrives as `undefined`. */
  bodyRequired?: boolean;
  /**
   * The body as the OpenAPI document shows it, when the service checks more of it than `body`
   * says (a report's parameters, checked against their type's schema once the type is known):
   * the router checks `body`, the service the rest, and together they refuse what this refuses.
   * By default the document shows `body`.
   */
  documentedBody?: TSchema;
  /**
   * Runs on the parsed body before schema validation, for a rule that decides the answer
   * whatever else the body holds (it throws to refuse).
   */
  bodyGuard?: (body: unknown) => void;
  /**
   * The dialect of this operation's errors: `problem` (RFC 9457 problem details, the default),
   * `oauth` (RFC 6749 §5.2), `scim` (the SCIM error schema of RFC 7644 §3.12) or `authzen` (the
   * OpenID AuthZEN Authorization API: plain-text messages, a body that cannot be read is 400
   * whatever its media type, and any printable `X-Request-ID` is echoed).
   */
  errors?: ErrorDialect;
}

export type ErrorDialect = 'problem' | 'oauth' | 'scim' | 'authzen';

type Handler<P, Q, B, Result> = (
  input: RouteInput<P, Q, B>,
) => Promise<Result | undefined> | Result | undefined;

/**
 * Everything the service knows about one operation. The router, the validators and the OpenAPI
 * document are all built from these, so they cannot drift apart.
 */
export interface RouteSpec<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  R extends Responses = Responses,
> extends RouteCommon {
  params?: P;
  query?: Q;
  body?: B;
  responses: R;
  /** Answers one of the declared statuses with a body of its schema's type. */
  handler: Handler<In<P>, In<Q>, In<B>, TypedResult<NoInfer<R>>>;
}

/** An operation with its schema types erased, as the router and the OpenAPI builder hold it. */
export interface AnyRoute extends RouteCommon {
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  responses: Responses;
  handler: Handler<unknown, unknown, unknown, RouteResult>;
}

/** Checks a handler against its schemas; the router validates input before the handler runs. */
export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  R extends Responses = Responses,
>(spec: RouteSpec<P, Q, B, R>): AnyRoute {
  return spec as unknown as AnyRoute;
}

export function koaPath(openApiPath: string): string {
  return openApiPath.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/**
 * The media types an operation reads a JSON body as, which the OpenAPI document declares: JSON;
 * on the SCIM routes SCIM's own JSON type besides it (RFC 7644 §3.1); on the other `PATCH`
 * routes, whose bodies are merge patches, the merge patch type besides it (RFC 7396). Any other
 * (`application/vnd.api+json`, a merge patch sent to a `POST`, …) is refused with 415.
 */
export function jsonMediaTypes(route: Pick<AnyRoute, 'errors' | 'method'>): string[] {
  if (route.errors === 'scim') return ['application/scim+json', 'application/json'];
  if (route.method === 'PATCH') return ['application/json', 'application/merge-patch+json'];
  return ['application/json'];
}
