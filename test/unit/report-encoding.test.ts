import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { createEncoder, escapeCsvCell, type ReportFormat } from '../../src/reports/encoding.js';

// Characters that need quoting or the formula prefix, and some that need neither.
const awkward = fc.constantFrom(...'=+-@\t\r\n",;\' aé', '\r\n', '😀');
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: awkward, maxLength: 8 }),
  fc
    .tuple(fc.constantFrom('=', '+', '-', '@', '\t', '\r'), fc.string({ maxLength: 8 }))
    .map(([a, b]) => a + b),
);
const primitive = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(
  { weight: 4, arbitrary: primitive },
  fc.constant(undefined),
  fc.array(fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)), { maxLength: 4 }),
  fc.dictionary(text, primitive, { maxKeys: 3 }),
  fc.array(fc.dictionary(text, primitive, { maxKeys: 2 }), { minLength: 1, maxLength: 2 }),
);
const columnNames = fc.uniqueArray(
  fc.oneof(text, fc.constantFrom('id', '__proto__', 'toString', 'constructor')),
  { minLength: 1, maxLength: 5 },
);
/** Rows over the columns; a column may be absent from a row. */
const report = columnNames.chain((columns) =>
  fc.record({
    columns: fc.constant(columns),
    rows: fc.array(
      fc
        .tuple(...columns.map(() => fc.option(value, { nil: undefined, freq: 5 })), fc.boolean())
        .map((cells) =>
          Object.fromEntries(
            columns.flatMap((key, i) => {
              const cell = cells[i];
              // Absent, or present and undefined: the two must read alike.
              return cell === undefined && cells[columns.length] === true ? [] : [[key, cell]];
            }),
          ),
        ),
      { maxLength: 12 },
    ),
    pageSizes: fc.array(fc.nat({ max: 5 }), { maxLength: 6 }),
    meta: fc.dictionary(text, primitive, { maxKeys: 3 }),
  }),
);

function paged<T>(rows: readonly T[], sizes: readonly number[]): T[][] {
  const pages: T[][] = [];
  let at = 0;
  for (const size of sizes) {
    pages.push(rows.slice(at, at + size));
    at += size;
  }
  pages.push(rows.slice(at));
  return pages;
}

/**
 * A whole file, written as a resuming job would: a fresh encoder for every chunk, told only
 * whether a row came before.
 */
function encode(
  format: ReportFormat,
  columns: readonly string[],
  meta: Record<string, unknown>,
  pages: readonly (readonly Record<string, unknown>[])[],
): string {
  let out = createEncoder(format, columns).start(meta);
  let written = 0;
  for (const page of pages) {
    out += createEncoder(format, columns).rows(page, written === 0);
    written += page.length;
  }
  return out + createEncoder(format, columns).end(written);
}

// The expected cell text, written out independently of the encoder.
function expectedCell(v: unknown): string {
  let t: string;
  if (v === null || v === undefined) t = '';
  else if (typeof v === 'string') t = v;
  else if (typeof v === 'number' || typeof v === 'boolean') t = String(v);
  else if (Array.isArray(v) && v.every((e) => e === null || typeof e !== 'object'))
    t = v.map((e) => (e === null ? '' : String(e))).join(';');
  else t = JSON.stringify(v);
  return /^[=+\-@\t\r]/.test(t) ? `'${t}` : t;
}

function own(row: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(row, key) ? row[key] : undefined;
}

function parseCsv(csv: string): string[][] {
  return parse(csv, { relax_column_count: false });
}

describe('report encoding', () => {
  it('writes CSV that an RFC 4180 reader reads back cell for cell, however the rows are paged', () => {
    fc.assert(
      fc.property(report, ({ columns, rows, pageSizes, meta }) => {
        const csv = encode('csv', columns, meta, paged(rows, pageSizes));
        expect(csv).to.equal(encode('csv', columns, {}, [rows]));
        expect(csv.endsWith('\r\n')).to.equal(true);
        expect(parseCsv(csv)).to.deep.equal([
          columns.map(expectedCell),
          ...rows.map((row) => columns.map((key) => expectedCell(own(row, key)))),
        ]);
      }),
      { numRuns: 500 },
    );
  });

  it('writes one JSON document of the columns, however the rows are paged', () => {
    fc.assert(
      fc.property(report, ({ columns, rows, pageSizes, meta }) => {
        const json = encode('json', columns, meta, paged(rows, pageSizes));
        expect(json).to.equal(encode('json', columns, meta, [rows]));
        const data = rows.map((row) =>
          Object.fromEntries(
            columns
              .filter((key) => own(row, key) !== undefined)
              // -0 has no JSON text of its own: it reads back as 0.
              .map((key) => [key, JSON.parse(JSON.stringify(own(row, key)))]),
          ),
        );
        expect(JSON.parse(json)).to.deep.equal({
          report: JSON.parse(JSON.stringify(meta)),
          data,
          row_count: rows.length,
        });
      }),
      { numRuns: 500 },
    );
  });

  it('prefixes cells a spreadsheet would evaluate, and quotes them as needed', () => {
    expect(escapeCsvCell('=HYPERLINK("http://x")')).to.equal(`"'=HYPERLINK(""http://x"")"`);
    expect(escapeCsvCell('-1+1')).to.equal("'-1+1");
    expect(escapeCsvCell('+1')).to.equal("'+1");
    expect(escapeCsvCell('@SUM(A1)')).to.equal("'@SUM(A1)");
    expect(escapeCsvCell('\tx')).to.equal("'\tx");
    expect(escapeCsvCell('\rx')).to.equal(`"'\rx"`);
    expect(escapeCsvCell('hello')).to.equal('hello');
    expect(escapeCsvCell('a=b')).to.equal('a=b');
    expect(escapeCsvCell("'=1")).to.equal("'=1");
    expect(escapeCsvCell('a,b')).to.equal('"a,b"');
    expect(escapeCsvCell('line\nbreak')).to.equal('"line\nbreak"');
    expect(escapeCsvCell(-3)).to.equal("'-3");
    expect(escapeCsvCell(2.5)).to.equal('2.5');
    expect(escapeCsvCell(true)).to.equal('true');
    expect(escapeCsvCell(null)).to.equal('');
    expect(escapeCsvCell(undefined)).to.equal('');
    expect(escapeCsvCell(['a', 'b,c', 1])).to.equal('"a;b,c;1"');
    expect(escapeCsvCell(['-x', 'y'])).to.equal("'-x;y");
    expect(escapeCsvCell({ a: 1, b: 'x' })).to.equal('"{""a"":1,""b"":""x""}"');
    expect(escapeCsvCell(new Date('2024-01-02T03:04:05Z'))).to.equal('2024-01-02T03:04:05.000Z');
  });

  it('writes the header, CRLF line ends, and rows in column order', () => {
    const csv = createEncoder('csv', ['name', '=cmd', 'tags']);
    expect(csv.contentType).to.equal('text/csv; charset=utf-8');
    expect(csv.fileExtension).to.equal('csv');
    expect(
      csv.start({ ignored: true }) +
        csv.rows([{ tags: ['a', 'b'], name: 'hello', extra: 'not a column' }], true) +
        csv.rows([{ name: '@SUM(A1)', '=cmd': '=1+1' }], false) +
        csv.end(2),
    ).to.equal("name,'=cmd,tags\r\nhello,,a;b\r\n'@SUM(A1),'=1+1,\r\n");
  });

  it('keeps a lone empty cell from reading as a blank line', () => {
    const csv = createEncoder('csv', ['note']);
    const out = csv.start({}) + csv.rows([{ note: '' }, {}, { note: 'x' }], true) + csv.end(3);
    expect(out).to.equal('note\r\n""\r\n""\r\nx\r\n');
    expect(parseCsv(out)).to.deep.equal([['note'], [''], [''], ['x']]);
  });

  it('writes the rows of a JSON report one a line, in column order', () => {
    const json = createEncoder('json', ['id', 'tags', 'manager']);
    expect(json.contentType).to.equal('application/json; charset=utf-8');
    expect(json.fileExtension).to.equal('json');
    expect(
      json.start({ type: 'access', generated_at: '2024-01-01T00:00:00Z' }) +
        json.rows([{ manager: null, id: 'p1', tags: ['=x'], extra: 1 }], true) +
        json.rows([], false) +
        json.rows([{ id: 'p2', manager: undefined }], false) +
        json.end(2),
    ).to.equal(
      '{"report":{"type":"access","generated_at":"2024-01-01T00:00:00Z"},"data":[\n' +
        '{"id":"p1","tags":["=x"],"manager":null}\n' +
        ',{"id":"p2"}\n' +
        '],"row_count":2}\n',
    );
  });

  it('writes an empty report as the header alone, or a document with no data', () => {
    const csv = createEncoder('csv', ['a', 'b']);
    const emptyCsv = csv.start({}) + csv.rows([], true) + csv.end(0);
    expect(emptyCsv).to.equal('a,b\r\n');
    expect(parseCsv(emptyCsv)).to.deep.equal([['a', 'b']]);

    const json = createEncoder('json', ['a', 'b']);
    const emptyJson = json.start({ type: 'x' }) + json.rows([], true) + json.end(0);
    expect(JSON.parse(emptyJson)).to.deep.equal({ report: { type: 'x' }, data: [], row_count: 0 });
  });

  it('refuses no columns, or a column named twice', () => {
    expect(() => createEncoder('csv', [])).to.throw();
    expect(() => createEncoder('json', ['a', 'b', 'a'])).to.throw();
  });
});
