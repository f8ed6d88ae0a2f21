import { expect } from 'chai';
import { Catalogue, requiredQueryNames } from '../../src/db/catalogue.js';
import type { AppError } from '../../src/errors/errors.js';
import { buildOpenApi } from '../../src/http/openapi/build.js';
import { reportRoutes } from '../../src/http/routes/reports.js';
import '../../src/reports/repository.js';
import { checkParameters } from '../../src/reports/service.js';
import type { SourceReader, SourceRows } from '../../src/reports/sources.js';
import { REPORT_TYPE_SPECS, reportTypeSpec } from '../../src/reports/types/index.js';
import { REPORT_TYPES } from '../../src/vocabulary/report-types.js';

/**
 * The registry of report types (src/reports/types/): one module per type, each carrying what the
 * request check, the OpenAPI document and the generator read of it.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const NOW = '2026-03-01T10:00:00.000Z';

/** The problem a request with these parameters would get, or the parameters it would store. */
function outcome(type: (typeof REPORT_TYPES)[number], parameters: Record<string, unknown>) {
  try {
    return { stored: checkParameters(type, parameters, NOW) };
  } catch (err) {
    const error = err as AppError;
    return { code: error.code, detail: error.message, errors: error.errors };
  }
}

/** A reader over canned pages, recording the queries asked of it. */
function cannedReader(pages: Record<string, SourceRows<unknown>[]>, asked: string[]): SourceReader {
  return {
    total: async (query) => {
      asked.push(query);
      return 1;
    },
    page: async <T extends SourceRows<unknown>>(query: string) => {
      asked.push(query);
      return (pages[query]?.shift() ?? { scanned: 0, last: null, rows: [] }) as T;
    },
    risks: async () => new Map(),
    actsFor: async () => new Map(),
  };
}

describe('report types', () => {
  it('has one module for each report type of the vocabulary, in its order, named as it is', () => {
    expect(REPORT_TYPE_SPECS.map((spec) => spec.name)).to.deep.equal([...REPORT_TYPES]);
    for (const name of REPORT_TYPES) expect(reportTypeSpec(name).name).to.equal(name);
  });

  it('gives every type a description, a closed parameter schema, its columns and a source', () => {
    for (const spec of REPORT_TYPE_SPECS) {
      expect(spec.description, spec.name).to.match(/^\S/);
      expect(spec.parameters.type, spec.name).to.equal('object');
      expect(spec.parameters.additionalProperties, spec.name).to.equal(false);
      for (const [name, property] of Object.entries(spec.parameters.properties)) {
        expect(property.description, `${spec.name}.${name}`).to.be.a('string').and.not.equal('');
        // Request bodies bound every string they carry (test/http/limits.test.ts holds them to it).
        if (property.type === 'string')
          expect(property.maxLength, `${spec.name}.${name}`).to.be.at.most(4096);
      }
      expect(spec.columns.length, spec.name).to.be.greaterThan(0);
      expect(new Set(spec.columns).size, `${spec.name}: a column named twice`).to.equal(spec.columns.length);
      expect(typeof spec.source, spec.name).to.equal('function');
    }
  });

  it('declares the queries each type names, and each has its file in cypher/reports/', async () => {
    const declared = requiredQueryNames();
    const named = REPORT_TYPE_SPECS.flatMap((spec) => spec.queries.map((q) => `reports/${q}`));
    expect(named).to.include('reports/rows_audit_log');
    for (const query of named) expect(declared, query).to.include(query);
    const catalogue = await Catalogue.load(undefined, named);
    for (const query of named) expect(catalogue.get(query), query).to.match(/RETURN/);
  });

  it("carries each type's parameters into the OpenAPI document, one request form per type", () => {
    const routes = reportRoutes({ reports: {} as never });
    const document = buildOpenApi(routes, {
      title: 'test',
      version: 'test',
      description: 'test',
      serverUrl: 'http://localhost',
      tokenUrl: 'http://localhost/v1/auth/token',
    });
    const paths = document['paths'] as Record<string, Record<string, Record<string, Json>>>;
    const create = paths['/v1/audit/reports']!['post']!;
    expect(create['requestBody']).to.deep.equal({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateReport' } } },
    });
    const schemas = (document['components'] as { schemas: Record<string, Record<string, Json>> }).schemas;
    const forms = (schemas['CreateReport']!['oneOf'] as { $ref: string }[]).map(
      (ref) => schemas[ref.$ref.replace('#/components/schemas/', '')]!,
    );
    const typeOf = (form: Record<string, Json>): Json =>
      ((form['properties'] as Record<string, Record<string, Json>>)['type'] ?? {})['const'] ?? null;
    expect(forms.map(typeOf)).to.deep.equal([...REPORT_TYPES]);
    for (const spec of REPORT_TYPE_SPECS) {
      const form = forms.find((f) => typeOf(f) === spec.name)!;
      const properties = form['properties'] as Record<string, Json>;
      expect(properties['parameters'], spec.name).to.deep.equal(JSON.parse(JSON.stringify(spec.parameters)));
      expect(form['description'], spec.name).to.contain(spec.description);
      expect(create['description'], spec.name).to.contain(`\`${spec.name}\`: ${spec.description}`);
    }
  });

  describe('the parameters a request gives', () => {
    it('are stored with their defaults and the instant they are as of', () => {
      expect(outcome('access_review', {})).to.deep.equal({ stored: {} });
      expect(outcome('dormant_principals', {})).to.deep.equal({ stored: { days: 90, as_of: NOW } });
      expect(outcome('dormant_principals', { days: 30 })).to.deep.equal({ stored: { days: 30, as_of: NOW } });
      expect(outcome('audit_log', { until: '2026-01-01T02:00:00+02:00' })).to.deep.equal({
        stored: { since: '1970-01-01T00:00:00.000Z', until: '2026-01-01T00:00:00Z' },
      });
      expect(outcome('audit_log', { since: '2026-01-01T00:00:00Z' })).to.deep.equal({
        stored: { since: '2026-01-01T00:00:00Z', until: NOW },
      });
    });

    it('are refused with one error per parameter, those the type does not take first', () => {
      const refused = (errors: { pointer: string; message: string }[]) => ({
        code: 'VALIDATION_FAILED',
        detail: 'the report parameters are invalid',
        errors,
      });
      const range = 'must be an integer from 1 to 36500';
      expect(outcome('dormant_principals', { days: 'ninety' })).to.deep.equal(
        refused([{ pointer: '/parameters/days', message: range }]),
      );
      expect(outcome('dormant_principals', { days: 0 })).to.deep.equal(
        refused([{ pointer: '/parameters/days', message: range }]),
      );
      expect(outcome('dormant_principals', { days: 1.5, weeks: 2, 'a/b': 1 })).to.deep.equal(
        refused([
          { pointer: '/parameters/weeks', message: 'is not a parameter of dormant_principals reports' },
          { pointer: '/parameters/a~1b', message: 'is not a parameter of dormant_principals reports' },
          { pointer: '/parameters/days', message: range },
        ]),
      );
      expect(outcome('principal_inventory', { days: 3 })).to.deep.equal(
        refused([
          { pointer: '/parameters/days', message: 'is not a parameter of principal_inventory reports' },
        ]),
      );
      expect(outcome('audit_log', { since: 'yesterday', until: 5 })).to.deep.equal(
        refused([
          { pointer: '/parameters/since', message: 'must be an RFC 3339 timestamp' },
          { pointer: '/parameters/until', message: 'must be an RFC 3339 timestamp' },
        ]),
      );
      expect(outcome('audit_log', { since: `2026-01-01T00:00:00.${'0'.repeat(64)}Z` })).to.deep.equal(
        refused([{ pointer: '/parameters/since', message: 'must be an RFC 3339 timestamp' }]),
      );
      expect(outcome('audit_log', { since: '2026-12-31T23:59:60Z' })).to.deep.equal(
        refused([{ pointer: '/parameters/since', message: 'must be an RFC 3339 timestamp' }]),
      );
      expect(
        outcome('audit_log', { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }),
      ).to.deep.equal(refused([{ pointer: '/parameters/until', message: 'must be later than since' }]));
    });
  });

  describe('sources read from the database', () => {
    const context = {
      access: { entriesOf: () => undefined },
      index: {} as never,
      pageSize: { principals: 2, review: 2 },
    };

    it('gives the audit log its columns, page after page, and reads only its own queries', async () => {
      const spec = reportTypeSpec('audit_log');
      const event = (id: string, at: string) => ({
        id,
        occurred_at: at,
        type: 'principal.created',
        actor_type: 'client',
        actor_id: 'cli_1',
        target_type: 'principal',
        target_id: 'prn_1',
        outcome: 'success',
        request_id: 'req_1',
        source_ip: null,
        user_agent: null,
        changes: null,
      });
      const asked: string[] = [];
      const read = cannedReader(
        {
          rows_audit_log: [
            {
              scanned: 2,
              last: 'evt_2',
              lastAt: '2026-01-01T00:00:02Z',
              rows: [event('evt_1', '2026-01-01T00:00:01Z'), event('evt_2', '2026-01-01T00:00:02Z')],
            } as SourceRows<unknown>,
            { scanned: 1, last: 'evt_3', rows: [event('evt_3', '2026-01-01T00:00:03Z')] },
          ],
        },
        asked,
      );
      const source = spec.source(outcome('audit_log', {}).stored!, context);
      expect(await source.total(read)).to.equal(1);
      const first = await source.page(read, null);
      expect(first.cursor).to.equal(JSON.stringify(['2026-01-01T00:00:02Z', 'evt_2']));
      const second = await source.page(read, first.cursor);
      expect(second.cursor).to.equal(null);
      const rows = [...first.rows, ...second.rows];
      expect(rows.map((r) => r['id'])).to.deep.equal(['evt_1', 'evt_2', 'evt_3']);
      for (const row of rows) expect(Object.keys(row)).to.deep.equal([...spec.columns]);
      expect(new Set(asked)).to.deep.equal(new Set(spec.queries));
    });
  });
});
