import type { Middleware } from 'koa';
import { compile, documentAjv, type Validator } from '../../schemas/validator.js';
import { stateOf } from '../state.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

let documents = 0;

/** `#/components/...` as seen from the document, for schemas compiled on their own. */
function rooted(node: Json, documentId: string): Json {
  if (Array.isArray(node)) return node.map((n) => rooted(n, documentId));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === '$ref' && typeof value === 'string' && value.startsWith('#/')
        ? `${documentId}${value}`
        : rooted(value, documentId);
  }
  return out;
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Checks each response of a documented operation against the OpenAPI document: its status must
 * be listed, its media type one listed for that status, and a JSON body must match the schema
 * given there. This holds the document to what the service really sends, error responses
 * included (the response schemas of successes are also checked where they are produced).
 */
export class Conformance {
  readonly violations: string[] = [];
  private readonly validators = new Map<string, Validator>();
  private readonly operations: Record<string, Record<string, { responses: Record<string, Json> }>>;
  private readonly documentId: string;

  constructor(
    document: Record<string, unknown>,
    private readonly onViolation: (violation: string) => void = () => undefined,
  ) {
    this.operations = document['paths'] as typeof this.operations;
    documents += 1;
    this.documentId = `openapi-document-${documents}`;
    documentAjv.addSchema({
      $id: this.documentId,
      components: rooted(document['components'] as Json, this.documentId),
    });
  }

  middleware(): Middleware {
    return async (ctx, next) => {
      await next();
      const template = stateOf(ctx).route?.path;
      const operation = template ? this.operations[template]?.[ctx.method.toLowerCase()] : undefined;
      if (!operation) return;
      let problem: string | undefined;
      try {
        problem = this.check(operation.responses, ctx.status, ctx.response.get('Content-Type'), ctx.body);
      } catch (err) {
        problem = `cannot be checked: ${err instanceof Error ? err.message : String(err)}`;
      }
      if (problem) {
        const violation = `${ctx.method} ${template} → ${ctx.status}: ${problem}`;
        this.violations.push(violation);
        this.onViolation(violation);
      }
    };
  }

  private check(
    responses: Record<string, Json>,
    status: number,
    contentType: string | undefined,
    body: unknown,
  ): string | undefined {
    const documented = (responses[String(status)] ?? responses['default']) as
      { content?: Record<string, { schema?: Json }> } | undefined;
    if (!documented) return `status ${status} is not documented`;
    const content = documented.content;
    if (!content)
      return body === undefined || body === null || body === ''
        ? undefined
        : 'a body where none is documented';
    const type = mediaType(contentType);
    const entry = Object.entries(content).find(([documentedType]) => mediaType(documentedType) === type)?.[1];
    if (!entry) return `media type ${type || '(none)'} is not one of ${Object.keys(content).join(', ')}`;
    if (!type.endsWith('json') || !entry.schema) return undefined;
    const key = JSON.stringify(entry.schema);
    let validate = this.validators.get(key);
    if (!validate) {
      validate = compile(documentAjv, rooted(entry.schema, this.documentId) as never);
      this.validators.set(key, validate);
    }
    const value: unknown =
      typeof body === 'string'
        ? safeParse(body)
        : Buffer.isBuffer(body)
          ? safeParse(body.toString('utf8'))
          : body;
    if (!validate(value)) {
      return `the body breaks the documented schema: ${JSON.stringify(validate.errors?.slice(0, 3))}`;
    }
    return undefined;
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
