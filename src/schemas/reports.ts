import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { REPORT_TYPES } from '../vocabulary/report-types.js';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';
import { FreeForm } from './free-form.js';

const ReportType = Type.Union(
  REPORT_TYPES.map((t) => Type.Literal(t)),
  { description: REPORT_TYPES.join(', ') },
);
const ReportFormat = Type.Union([Type.Literal('json'), Type.Literal('csv')]);
const ReportStatus = Type.Union(['pending', 'running', 'completed', 'failed'].map((s) => Type.Literal(s)));

/**
 * The body of a report request as the router checks it: a known type and format, and parameters
 * held to the free-form bounds. The service checks the parameters against their type's schema
 * once the type is known (so that their errors name the type), and the OpenAPI document shows
 * the body as `createReportDocument` makes it: both refuse the same requests.
 */
export const CreateReportBody = Type.Object(
  {
    type: ReportType,
    format: ReportFormat,
    parameters: Type.Optional(FreeForm(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: false },
);

/** What the OpenAPI document needs of a report type to describe its requests. */
export interface DocumentedReportType {
  name: string;
  description: string;
  parameters: TObject;
}

/** `access_review` → `AccessReview`, for the names of the document's schemas. */
const pascal = (name: string): string =>
  name.replace(/(^|_)([a-z])/g, (_m, _sep, letter: string) => letter.toUpperCase());

/**
 * The body of a report request as the OpenAPI document shows it: one form per report type, told
 * apart by `type` (a constant in each), each with that type's parameters
 * (`CreateAccessReviewReport`, ...).
 */
export function createReportDocument(types: readonly DocumentedReportType[]): TSchema {
  const forms = types.map((t) =>
    Type.Object(
      {
        type: Type.Literal(t.name),
        format: ReportFormat,
        parameters: Type.Optional(t.parameters),
      },
      {
        additionalProperties: false,
        title: `Create${pascal(t.name)}Report`,
        description: `\`${t.name}\`: ${t.description}.`,
      },
    ),
  );
  return Type.Unsafe({ title: 'CreateReport', oneOf: forms });
}

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
