import { Type } from '@sinclair/typebox';
import { pageOf } from '../../pagination.js';
import type { ReportTypeSpec } from '../../reports/report-type.js';
import type { ReportService } from '../../reports/service.js';
import { REPORT_TYPE_SPECS } from '../../reports/types/index.js';
import { Id } from '../../schemas/common.js';
import {
  CreateReportBody,
  createReportDocument,
  ReportList,
  ReportListQuery,
  ReportSchema,
} from '../../schemas/reports.js';
import { listBody, operationContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';

const IdParams = Type.Object({ id: Id('report') });

/** A type's parameters as the prose names them: `days` (default 90). */
function parameterNames(spec: ReportTypeSpec): string {
  const names = Object.entries(spec.parameters.properties).map(([name, schema]) =>
    schema.default === undefined ? `\`${name}\`` : `\`${name}\` (default ${JSON.stringify(schema.default)})`,
  );
  return names.length === 0 ? 'no parameters' : names.join(', ');
}

/** The request's prose: each type from its module, and what every file is like. */
const CREATE_DESCRIPTION = [
  'Generation runs in the background and survives restarts; follow `Location` for progress. Types:',
  '',
  ...REPORT_TYPE_SPECS.map((spec) => `- \`${spec.name}\`: ${spec.description}; ${parameterNames(spec)}.`),
  '',
  "A parameter the type does not take is `400`. CSV follows RFC 4180 with a header row; a cell starting with `=`, `+`, `-`, `@`, tab or carriage return is prefixed with `'`.",
].join('\n');

export function reportRoutes(deps: { reports: ReportService }): AnyRoute[] {
  const common = {
    tags: ['Audit'],
    auth: { scope: 'audit:reports' as const },
    rateLimit: 'standard' as const,
  };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      path: '/v1/audit/reports',
      operationId: 'createReport',
      summary: 'Generate an audit report',
      description: CREATE_DESCRIPTION,
      rateLimit: 'bulk',
      body: CreateReportBody,
      documentedBody: createReportDocument(REPORT_TYPE_SPECS),
      responses: { 202: { description: 'Accepted', schema: ReportSchema } },
      handler: async ({ ctx, body }) => {
        const report = await deps.reports.request(
          { type: body.type, format: body.format, parameters: body.parameters },
          operationContext(ctx),
        );
        return { status: 202, body: report, headers: { Location: `/v1/audit/reports/${report.id}` } };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/v1/audit/reports',
      operationId: 'listReports',
      summary: 'List audit reports',
      description: 'Newest first (`requested_at` descending, then `id` descending).',
      query: ReportListQuery,
      responses: { 200: { description: 'A page of reports', schema: ReportList } },
      handler: async ({ query }) => ({
        body: listBody(await deps.reports.list({ type: query.type, status: query.status }, pageOf(query))),
      }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/v1/audit/reports/{id}',
      operationId: 'getReport',
      summary: 'Status and progress of an audit report',
      params: IdParams,
      responses: { 200: { description: 'The report', schema: ReportSchema } },
      handler: async ({ params }) => ({ body: await deps.reports.get(params.id) }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/v1/audit/reports/{id}/content',
      operationId: 'getReportContent',
      summary: 'The file of a completed audit report',
      description:
        '`text/csv` or `application/json` as requested; `409 CONFLICT` until the report is completed.',
      params: IdParams,
      responses: {
        200: {
          description: 'The file',
          contentType: ['text/csv; charset=utf-8', 'application/json; charset=utf-8'],
        },
        409: { description: 'The report is not completed (`CONFLICT`)' },
      },
      handler: async ({ ctx, params }) => {
        const file = await deps.reports.content(params.id);
        ctx.status = 200;
        ctx.type = file.contentType;
        ctx.set('Content-Disposition', `attachment; filename="${file.filename}"`);
        if (file.bytes > 0) ctx.length = file.bytes;
        ctx.body = file.stream;
        return undefined;
      },
    }),
  ];
}
