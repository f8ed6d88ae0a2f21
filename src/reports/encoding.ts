import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/**
 * The text of report files (docs/api.md §6.2). A report is written page by page into stored chunks,
 * and a job that resumes after a crash continues from the last stored chunk; so encoders keep no
 * state, and what a chunk looks like depends only on its rows, the columns and whether any row
 * came before it. Concatenating the chunks of any split of the rows gives the same file.
 */

export type ReportFormat = 'json' | 'csv';

/** What a file of each format is served as. */
export const REPORT_FILES: Record<ReportFormat, { contentType: string; fileExtension: string }> = {
  csv: { contentType: 'text/csv; charset=utf-8', fileExtension: 'csv' },
  json: { contentType: 'application/json; charset=utf-8', fileExtension: 'json' },
};

/**
 * A piece of a report file as stored: gzip at its fastest level (report text shrinks about
 * tenfold, and Neo4j writes and keeps that much less), as the byte array Neo4j stores.
 */
export async function packChunk(text: string): Promise<Int8Array> {
  // On the thread pool: a piece is about a mebibyte, milliseconds of work the event loop keeps.
  const packed = await gzipAsync(text, { level: 1 });
  return new Int8Array(packed.buffer, packed.byteOffset, packed.length);
}

export function unpackChunk(data: Int8Array): Promise<Buffer> {
  return gunzipAsync(data);
}

export interface ReportEncoder {
  contentType: string;
  fileExtension: string;
  start(meta: Record<string, unknown>): string;
  /** `first`: no row was written before these. */
  rows(rows: readonly Record<string, unknown>[], first: boolean): string;
  end(rowCount: number): string;
}

// OWASP's list for CSV injection: a spreadsheet evaluates a cell that starts with one of these.
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);
const NEEDS_QUOTES = /[",\r\n]/;

/** A row's own value: a column named like an inherited member (`toString`) must not read it. */
function valueAt(row: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(row, key) ? row[key] : undefined;
}

function primitiveText(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'undefined':
      return '';
    default:
      return value === null ? '' : undefined;
  }
}

function cellText(value: unknown): string {
  const primitive = primitiveText(value);
  if (primitive !== undefined) return primitive;
  if (Array.isArray(value)) {
    const parts = value.map(primitiveText);
    if (parts.every((part) => part !== undefined)) return parts.join(';');
  }
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) return '';
  // A Date (or anything else serialised as a string) reads as that string, not as quoted JSON.
  return json.startsWith('"') ? (JSON.parse(json) as string) : json;
}

/**
 * One CSV cell: the value as text, `'`-prefixed when a spreadsheet would take it for a formula,
 * quoted as RFC 4180 requires. The prefix goes on whatever the type, so a negative number reads
 * `'-1`: a spreadsheet cannot tell it from a formula that happens to start with `-`.
 */
export function escapeCsvCell(value: unknown): string {
  let text = cellText(value);
  if (FORMULA_START.has(text.charAt(0))) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * Text cells repeat a great deal in a report (a principal's name on each of its rows, a policy id
 * on thousands): each distinct one is escaped once. Bounded, so memory stays flat.
 */
function memoised(escape: (text: string) => string): (text: string) => string {
  const seen = new Map<string, string>();
  return (text) => {
    let out = seen.get(text);
    if (out === undefined) {
      out = escape(text);
      if (seen.size >= 50_000) seen.clear();
      seen.set(text, out);
    }
    return out;
  };
}

function csvEncoder(columns: readonly string[]): ReportEncoder {
  const text = memoised(escapeCsvCell);
  const cell = (value: unknown): string => (typeof value === 'string' ? text(value) : escapeCsvCell(value));
  const line = (cells: string[]): string => {
    const joined = cells.join(',');
    // A record of one empty field would otherwise be a blank line, which readers skip.
    return `${joined === '' ? '""' : joined}\r\n`;
  };
  return {
    ...REPORT_FILES.csv,
    start: () => line(columns.map(escapeCsvCell)),
    rows: (rows) => {
      let out = '';
      for (const row of rows) out += line(columns.map((key) => cell(valueAt(row, key))));
      return out;
    },
    end: () => '',
  };
}

function jsonEncoder(columns: readonly string[]): ReportEncoder {
  // Keys are written as text so that a column such as `__proto__` stays an ordinary key.
  const keys = columns.map((key) => `${JSON.stringify(key)}:`);
  const text = memoised((value) => JSON.stringify(value));
  /** A row as a JSON object of the report's columns in their order; undefined members are left out. */
  const object = (row: Readonly<Record<string, unknown>>): string => {
    const members: string[] = [];
    for (let i = 0; i < columns.length; i += 1) {
      const value = valueAt(row, columns[i]!);
      const json = typeof value === 'string' ? text(value) : (JSON.stringify(value) as string | undefined);
      if (json !== undefined) members.push(keys[i]! + json);
    }
    return `{${members.join(',')}}`;
  };
  return {
    ...REPORT_FILES.json,
    start: (meta) => `{"report":${JSON.stringify(meta)},"data":[\n`,
    // The separator leads each row but the first: whether more rows follow is not known yet.
    rows: (rows, first) => {
      let out = '';
      rows.forEach((row, i) => {
        out += `${first && i === 0 ? '' : ','}${object(row)}\n`;
      });
      return out;
    },
    end: (rowCount) => `],"row_count":${rowCount}}\n`,
  };
}

/**
 * The encoder of a format. Both formats hold the given columns only, so a row cannot carry into
 * the file a field the report does not declare.
 */
export function createEncoder(format: ReportFormat, columns: readonly string[]): ReportEncoder {
  if (columns.length === 0) throw new Error('a report needs at least one column');
  if (new Set(columns).size !== columns.length) throw new Error('report columns must be distinct');
  return format === 'csv' ? csvEncoder(columns) : jsonEncoder(columns);
}
