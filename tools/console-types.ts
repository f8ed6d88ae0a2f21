/**
 * Writes console/src/api-types.ts: a TypeScript type for every named schema (components/schemas)
 * of the OpenAPI document the service serves at GET /v1/openapi.json, so the console reads the
 * API with the shapes the service declares rather than copies of them.
 *
 *   npm run console:types
 *
 * The document is the one `createApp` builds, made without a server or a database
 * (tools/openapi-document.ts). test/unit/console-types.test.ts fails while the committed file
 * differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { projectRoot } from '../src/paths.js';
import { openApiDocument } from './openapi-document.js';

/** The command that regenerates the file, as its header and the staleness test name it. */
export const COMMAND = 'npm run console:types';
/** Where the types go, relative to the project root. */
export const OUTPUT = 'console/src/api-types.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };

const REF = /^#\/components\/schemas\/([A-Z][A-Za-z0-9]*)$/;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Keywords that change what a value may be and that the types below cannot express. */
const UNSUPPORTED = [
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependentRequired',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  '$defs',
  'definitions',
  '$dynamicRef',
];

/** A rendered type and whether it needs parentheses inside an array type or an intersection. */
interface Rendered {
  text: string;
  compound: boolean;
}

const primary = (text: string): Rendered => ({ text, compound: false });

function isSchema(node: Json | undefined): node is Schema {
  return node !== null && typeof node === 'object' && !Array.isArray(node);
}

/** How long a line of a doc comment's text may grow before it wraps. */
const COMMENT_WIDTH = 96;

function wrap(line: string): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of line.split(/\s+/)) {
    if (current && current.length + 1 + word.length > COMMENT_WIDTH) {
      lines.push(current);
      current = word;
    } else {
      current = current ? `${current} ${word}` : word;
    }
  }
  lines.push(current);
  return lines;
}

/** A schema's description (and deprecation) as a doc comment, wrapped; empty without either. */
function comment(description: Json | undefined, deprecated = false): string {
  const text = typeof description === 'string' ? description.replaceAll('*/', '*\\/').trim() : '';
  const lines = text ? text.split('\n').flatMap((l) => (l.trim() ? wrap(l.trim()) : [''])) : [];
  if (deprecated) lines.push('@deprecated');
  if (lines.length === 0) return '';
  if (lines.length === 1) return `/** ${lines[0]} */\n`;
  return `/**\n${lines.map((l) => ` * ${l}`.trimEnd()).join('\n')}\n */\n`;
}

function union(members: Rendered[]): Rendered {
  const texts = [...new Set(members.map((m) => m.text))];
  if (texts.includes('unknown')) return primary('unknown');
  if (texts.length === 0) return primary('never');
  if (texts.length === 1) return members.find((m) => m.text === texts[0])!;
  return { text: texts.join(' | '), compound: true };
}

function parenthesised(r: Rendered): string {
  return r.compound ? `(${r.text})` : r.text;
}

class Renderer {
  constructor(private readonly names: ReadonlySet<string>) {}

  type(schema: Json, where: string): Rendered {
    if (schema === true) return primary('unknown');
    if (schema === false) return primary('never');
    if (!isSchema(schema)) throw new Error(`${where}: not a schema`);
    for (const keyword of UNSUPPORTED) {
      if (keyword in schema) throw new Error(`${where}: \`${keyword}\` has no TypeScript rendering here`);
    }
    const parts: Rendered[] = [];
    const ref = schema['$ref'];
    if (ref !== undefined) {
      const name = typeof ref === 'string' ? REF.exec(ref)?.[1] : undefined;
      if (!name || !this.names.has(name))
        throw new Error(`${where}: unknown reference ${JSON.stringify(ref)}`);
      parts.push(primary(name));
    }
    if ('const' in schema) parts.push(primary(JSON.stringify(schema['const'])));
    else if (Array.isArray(schema['enum']))
      parts.push(union(schema['enum'].map((v) => primary(JSON.stringify(v)))));
    else if (schema['type'] !== undefined || this.isObject(schema) || 'items' in schema) {
      parts.push(this.typed(schema, where));
    }
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      const members = schema[keyword];
      if (Array.isArray(members)) {
        parts.push(union(members.map((m, i) => this.type(m, `${where}/${keyword}/${i}`))));
      }
    }
    const all = schema['allOf'];
    if (Array.isArray(all)) parts.push(...all.map((m, i) => this.type(m, `${where}/allOf/${i}`)));

    let result: Rendered;
    const known = parts.filter((p) => p.text !== 'unknown');
    if (known.length === 0) result = primary('unknown');
    else if (known.length === 1) result = known[0]!;
    else result = { text: known.map(parenthesised).join(' & '), compound: true };
    if (schema['nullable'] === true) result = union([result, primary('null')]);
    return result;
  }

  private isObject(schema: Schema): boolean {
    return 'properties' in schema || 'additionalProperties' in schema || 'patternProperties' in schema;
  }

  /** `type`, which may list several, each with the keywords that apply to it. */
  private typed(schema: Schema, where: string): Rendered {
    const declared = schema['type'];
    const types =
      declared === undefined
        ? [this.isObject(schema) ? 'object' : 'array']
        : Array.isArray(declared)
          ? declared
          : [declared];
    return union(
      types.map((t) => {
        switch (t) {
          case 'string':
            return primary('string');
          case 'number':
          case 'integer':
            return primary('number');
          case 'boolean':
            return primary('boolean');
          case 'null':
            return primary('null');
          case 'array':
            return this.array(schema, where);
          case 'object':
            return this.object(schema, where);
          default:
            throw new Error(`${where}: unknown type ${JSON.stringify(t)}`);
        }
      }),
    );
  }

  private array(schema: Schema, where: string): Rendered {
    const prefix = schema['prefixItems'];
    if (Array.isArray(prefix)) {
      const items = prefix.map((p, i) => this.type(p, `${where}/prefixItems/${i}`).text);
      const rest = schema['items'];
      if (rest !== undefined && rest !== false)
        items.push(`...${parenthesised(this.type(rest, `${where}/items`))}[]`);
      return primary(`[${items.join(', ')}]`);
    }
    const items = schema['items'];
    return primary(
      `${items === undefined ? 'unknown' : parenthesised(this.type(items, `${where}/items`))}[]`,
    );
  }

  /** An object type: its properties, and an index signature for what else it may hold. */
  object(schema: Schema, where: string): Rendered {
    const properties = isSchema(schema['properties']) ? schema['properties'] : {};
    const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
    const lines: string[] = [];
    for (const [name, property] of Object.entries(properties)) {
      const key = IDENTIFIER.test(name) ? name : JSON.stringify(name);
      const optional = required.has(name) ? '' : '?';
      const doc = isSchema(property) ? comment(property['description'], property['deprecated'] === true) : '';
      lines.push(`${doc}${key}${optional}: ${this.type(property, `${where}/properties/${name}`).text};`);
    }
    const extra: Rendered[] = [];
    const additional = schema['additionalProperties'];
    if (additional !== undefined && additional !== false) {
      extra.push(this.type(additional, `${where}/additionalProperties`));
    }
    const patterns = schema['patternProperties'];
    if (isSchema(patterns)) {
      for (const [pattern, value] of Object.entries(patterns)) {
        extra.push(this.type(value, `${where}/patternProperties/${pattern}`));
      }
    }
    if (extra.length > 0) {
      // An index signature must admit every property: past named ones, say nothing narrower.
      const value = lines.length > 0 ? primary('unknown') : union(extra);
      lines.push(`[key: string]: ${value.text};`);
    }
    return primary(lines.length === 0 ? 'Record<string, never>' : `{\n${lines.join('\n')}\n}`);
  }
}

/** The generated module's text, formatted as the project formats its sources. */
export async function consoleTypes(document: Record<string, unknown> = openApiDocument()): Promise<string> {
  const components =
    (document['components'] as { schemas?: Record<string, Json> } | undefined)?.schemas ?? {};
  const names = Object.keys(components).sort();
  const renderer = new Renderer(new Set(names));
  const declarations = names.map((name) => {
    const schema = components[name]!;
    const where = `#/components/schemas/${name}`;
    const doc = isSchema(schema) ? comment(schema['description'], schema['deprecated'] === true) : '';
    const plainObject =
      isSchema(schema) &&
      (schema['type'] === 'object' || (schema['type'] === undefined && 'properties' in schema)) &&
      !['$ref', 'anyOf', 'oneOf', 'allOf', 'const', 'enum', 'nullable'].some((k) => k in schema);
    if (plainObject) {
      const body = renderer.object(schema, where).text;
      if (body.startsWith('{')) return `${doc}export interface ${name} ${body}`;
    }
    return `${doc}export type ${name} = ${renderer.type(schema, where).text};`;
  });
  const info = document['info'] as { title?: string; version?: string } | undefined;
  const header = [
    '/**',
    ` * Generated by \`${COMMAND}\` (tools/console-types.ts) from the named schemas of the OpenAPI`,
    ` * document the service serves at GET /v1/openapi.json (${info?.title ?? 'API'} ${info?.version ?? ''}).`,
    ' * Do not edit: change the schemas in src/ and run the command again.',
    ' */',
  ].join('\n');
  const source = `${header}\n\n${declarations.join('\n\n')}\n`;
  const file = path.join(projectRoot(), OUTPUT);
  const options = (await resolveConfig(file)) ?? {};
  return format(source, { ...options, filepath: file });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const text = await consoleTypes();
  writeFileSync(path.join(projectRoot(), OUTPUT), text);
  process.stdout.write(`wrote ${OUTPUT}\n`);
}
