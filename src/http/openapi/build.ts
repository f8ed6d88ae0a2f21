import type { TSchema } from '@sinclair/typebox';
import { SCOPE_DESCRIPTIONS } from '../../vocabulary/scopes.js';
import { OAuthErrorSchema } from '../../schemas/clients.js';
import { ScimErrorSchema } from '../../schemas/scim.js';
import { Problem } from '../../schemas/common.js';
import { MAX_HEADER_BYTES } from '../client-errors.js';
import { FORM_MEDIA_TYPE, jsonMediaTypes, type AnyRoute } from '../route.js';
import { MAX_TOKEN_LENGTH } from '../../consistency/tokens.js';

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  tokenUrl: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Collects schemas that carry a `title` as named components and replaces them by references,
 * so the document stays readable and each shape is described once.
 */
class Components {
  readonly schemas: Record<string, Json> = {};
  private readonly texts = new Map<string, string>();

  reference(schema: TSchema): Json {
    return this.walk(JSON.parse(JSON.stringify(schema)) as Json);
  }

  private walk(node: Json): Json {
    if (Array.isArray(node)) return node.map((n) => this.walk(n));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(node)) out[k] = this.walk(v);
    const title = node['title'];
    if (typeof title === 'string' && /^[A-Z][A-Za-z0-9]*$/.test(title)) {
      const text = JSON.stringify(out);
      const known = this.texts.get(title);
      if (known !== undefined && known !== text) throw new Error(`two different schemas are titled ${title}`);
      this.texts.set(title, text);
      this.schemas[title] = out;
      return { $ref: `#/components/schemas/${title}` };
    }
    return out;
  }
}

function parameters(schema: TSchema | undefined, where: 'path' | 'query', components: Components): Json[] {
  if (!schema) return [];
  const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const required = new Set((schema as { required?: string[] }).required ?? []);
  return Object.entries(props).map(([name, prop]) => {
    const p = prop as { description?: string };
    const entry: Record<string, Json> = {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      schema: components.reference(prop),
    };
    if (p.description) entry['description'] = p.description;
    return entry;
  });
}

const PROBLEM: Record<string, Json> = {
  'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
};
const OAUTH_ERROR: Record<string, Json> = {
  'application/json': { schema: { $ref: '#/components/schemas/OAuthError' } },
};
const SCIM_ERROR: Record<string, Json> = {
  'application/scim+json': { schema: { $ref: '#/components/schemas/ScimError' } },
};
const PLAIN_MESSAGE: Record<string, Json> = {
  'text/plain': { schema: { type: 'string', description: 'An error message (AuthZEN)' } },
};

/**
 * What an error of this operation looks like: problem details, except on the OAuth endpoints,
 * whose client errors follow RFC 6749 §5.2 — and whose 429 is either (the request rate limit
 * answers with a problem, throttled client authentication in the OAuth format) — and on the
 * AuthZEN endpoints, whose errors are plain messages.
 */
function errorContent(route: AnyRoute, status: number): Record<string, Json> {
  if (route.errors === 'authzen') return PLAIN_MESSAGE;
  if (route.errors === 'scim') return SCIM_ERROR;
  if (route.errors !== 'oauth' || status >= 500) return PROBLEM;
  if (status === 429) return { ...OAUTH_ERROR, ...PROBLEM };
  return OAUTH_ERROR;
}

const RATE_HEADERS: Record<string, Json> = {
  RateLimit: {
    description: 'Remaining quota: `"bucket";r=remaining;t=seconds-to-reset`',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'Quota policy: `"bucket";q=limit;w=window-seconds`',
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': { description: 'Requests allowed per window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in this window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'End of the window, Unix epoch seconds', schema: { type: 'integer' } },
};

const CONSISTENCY_HEADER: Json = {
  description:
    'Opaque token of everything this instance had committed when it answered; send it back as the ' +
    '`Consistency-Token` request header, to any instance, to be answered at least as fresh',
  schema: { type: 'string' },
};

const CONSISTENCY_PARAMETER: Json = {
  name: 'Consistency-Token',
  in: 'header',
  required: false,
  description:
    'A token a write answered: this request is then answered at least as fresh as that write ' +
    '(400 if it is not a token of this service, 503 if the instance cannot catch up in time)',
  schema: { type: 'string', maxLength: MAX_TOKEN_LENGTH },
};

/** Writes of the REST API and SCIM answer a consistency token with every success. */
const answersToken = (route: AnyRoute): boolean =>
  route.method !== 'GET' && (route.path.startsWith('/v1/') || route.path.startsWith('/scim/v2/'));

export function buildOpenApi(routes: readonly AnyRoute[], info: OpenApiInfo): Record<string, Json> {
  const components = new Components();
  components.reference(Problem);
  components.reference(OAuthErrorSchema);
  components.reference(ScimErrorSchema);
  const paths: Record<string, Record<string, Json>> = {};

  for (const route of routes) {
    const responses: Record<string, Json> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      const entry: Record<string, Json> = { description: spec.description };
      if (Array.isArray(spec.contentType)) {
        entry['content'] = Object.fromEntries(spec.contentType.map((type: string) => [type, {}]));
      } else if (spec.schema) {
        entry['content'] = {
          [(spec.contentType as string | undefined) ?? 'application/json']: {
            schema: components.reference(spec.schema),
          },
        };
      } else if (typeof spec.contentType === 'string') {
        entry['content'] = { [spec.contentType]: { schema: { type: 'string' } } };
      } else if (Number(status) >= 400) {
        entry['content'] = errorContent(route, Number(status));
      }
      const headers: Record<string, Json> = {};
      for (const [name, h] of Object.entries(spec.headers ?? {})) {
        headers[name] = { description: h.description, schema: components.reference(h.schema) };
      }
      if (route.rateLimit !== 'none') Object.assign(headers, RATE_HEADERS);
      if (answersToken(route) && Number(status) < 300) headers['Consistency-Token'] = CONSISTENCY_HEADER;
      if (Object.keys(headers).length > 0) entry['headers'] = headers;
      responses[status] = entry;
    }
    const errors: Record<string, string> = {};
    if (route.errors === 'authzen' && route.body) {
      errors['400'] = 'The body is not JSON, or lacks a required member';
    } else {
      errors['400'] =
        'Invalid request (`VALIDATION_FAILED`, `MALFORMED_JSON`), or a consistency token this service did not issue';
    }
    if (route.auth === 'connector') {
      errors['401'] = 'Missing token, or not the SCIM token of an active connector';
    } else if (route.auth !== 'public') {
      errors['401'] = 'Missing, invalid, expired or revoked token (`UNAUTHENTICATED`)';
      errors['403'] = `The token lacks the \`${route.auth.scope}\` scope (\`INSUFFICIENT_SCOPE\`)`;
    }
    if (route.params) errors['404'] = 'Not found (`NOT_FOUND`)';
    if (route.body) {
      errors['413'] = route.textBody
        ? `Body over ${route.textBody.limitBytes} bytes (\`PAYLOAD_TOO_LARGE\`)`
        : 'Body over 1 MiB (`PAYLOAD_TOO_LARGE`)';
      if (route.errors !== 'authzen')
        errors['415'] = route.textBody
          ? `Body is not ${route.textBody.mediaTypes.join(' or ')} (\`UNSUPPORTED_MEDIA_TYPE\`)`
          : 'Body is not JSON (`UNSUPPORTED_MEDIA_TYPE`)';
    }
    if (route.rateLimit !== 'none') errors['429'] = 'Over the rate limit (`RATE_LIMITED`)';
    errors['500'] = 'Internal error (`INTERNAL`)';
    errors['503'] =
      'The database is unreachable or too busy to finish in time, or the instance could not catch up with the consistency token in time (`UNAVAILABLE`)';
    for (const [status, description] of Object.entries(errors)) {
      if (!(status in responses)) {
        const entry: Record<string, Json> = { description, content: errorContent(route, Number(status)) };
        if (route.rateLimit !== 'none') entry['headers'] = RATE_HEADERS;
        responses[status] = entry;
      }
    }
    // Refused by the HTTP server before any route is known, so alike everywhere: always problem
    // details, never counted against a rate limit.
    responses['431'] ??= {
      description: `Request line and headers over ${MAX_HEADER_BYTES} bytes (\`REQUEST_HEADER_FIELDS_TOO_LARGE\`)`,
      content: PROBLEM,
    };

    const operation: Record<string, Json> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      parameters: [
        ...parameters(route.params, 'path', components),
        ...parameters(route.query, 'query', components),
        CONSISTENCY_PARAMETER,
      ],
      responses,
      security:
        route.auth === 'public'
          ? []
          : route.auth === 'connector'
            ? [{ scimToken: [] }]
            : [{ oauth2: [route.auth.scope] }],
      'x-required-scope': typeof route.auth === 'string' ? null : route.auth.scope,
      'x-rate-limit-bucket': route.rateLimit === 'none' ? null : route.rateLimit,
    };
    if (route.description) operation['description'] = route.description;
    if (route.body) {
      const schema = components.reference(route.documentedBody ?? route.body);
      const content: Record<string, Json> = {};
      if (route.textBody) {
        for (const type of route.textBody.mediaTypes) content[type] = { schema };
      } else {
        for (const kind of route.bodyTypes ?? ['json']) {
          const types = kind === 'json' ? jsonMediaTypes(route) : [FORM_MEDIA_TYPE];
          for (const type of types) content[type] = { schema };
        }
      }
      operation['requestBody'] = { required: route.bodyRequired ?? true, content };
    }
    const pathItem = (paths[route.path] ??= {});
    pathItem[route.method.toLowerCase()] = operation;
  }

  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        scimToken: {
          type: 'http',
          scheme: 'bearer',
          description: "A connector's SCIM token (POST /v1/connectors); it decides the connector.",
        },
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 client credentials; access tokens are RFC 9068 JWTs sent as Bearer tokens.',
          flows: {
            clientCredentials: {
              tokenUrl: info.tokenUrl,
              refreshUrl: info.tokenUrl,
              scopes: SCOPE_DESCRIPTIONS,
            },
          },
        },
      },
    },
  };
}
