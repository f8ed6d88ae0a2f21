import { Type, type Static } from '@sinclair/typebox';
import { REPORT_TYPES } from '../vocabulary/report-types.js';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';
import { FreeForm } from './free-form.js';

const ReportType = Type.Union(
  REPORT_TYPES.map((t) => Type.Literal(t)),
  { description: REPORT_TYPES.join(', ') },
);
const ReportFormat = Type.Union([Type.Literal('json'), Type.Literal('csv')]);
const ReportStatus = Type.Union(['pending', 'running', 'completed', 'failed'].map((s) => Type.Literal(s)));

export const CreateReportBody = Type.Object(
  {
    type: ReportType,
    format: ReportFormat,
    parameters: Type.Optional(
      FreeForm(
        Type.Object(
          {},
          {
            additionalProperties: true,
            description:
              '`dormant_principals`: `days` (default 90). `audit_log`: `since` and `until` (RFC 3339; default: everything up to the request). Other types take none.',
          },
        ),
      ),
    ),
  },
  { additionalProperties: false, title: 'CreateReport' },
);

export const ReportSchema = Type.Object(
  {
    id: Id('report'),
    type: ReportType,
    format: ReportFormat,
    parameters: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
      description: 'The parameters the report was made with, defaults included',
    }),
    status: ReportStatus,
    requested_at: Timestamp,
    requested_by: Type.String({ description: 'Client id of the requester' }),
    progress: Type.Integer({ minimum: 0, maximum: 100, description: 'Percent done' }),
    row_count: Type.Integer({ minimum: 0, description: 'Rows written so far' }),
    started_at: Type.Union([Timestamp, Type.Null()]),
    completed_at: Type.Union([Timestamp, Type.Null()]),
    download_url: Type.Union([Type.String(), Type.Null()], {
      description: 'Where the file is, once completed',
    }),
    expires_at: Type.Union([Timestamp, Type.Null()], { description: 'When the file is deleted' }),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false, title: 'Report' },
);
export type ReportView = Static<typeof ReportSchema>;

export const ReportListQuery = Type.Object({
  ...PageQuery,
  type: Type.Optional(ReportType),
  status: Type.Optional(ReportStatus),
});
export const ReportList = Paginated(ReportSchema, 'ReportList');
