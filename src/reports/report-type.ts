import type { Static, TObject } from '@sinclair/typebox';
import type { FieldError } from '../errors/errors.js';
import type { ReportType } from '../vocabulary/report-types.js';
import type { ReportParameters, RowSource, SourceContext } from './sources.js';

/**
 * Everything the service knows about one type of report, in one module of ./types/: the request
 * checks its parameters against `parameters`, the route's prose and the OpenAPI document describe
 * it from `description` and `parameters`, and the generator writes `columns` of the rows its
 * `source` reads. `Q` names the type's own queries, files of cypher/reports/ that the repository
 * declares (so the catalogue checks at boot that each is there) and runs for the source.
 */
export interface ReportTypeSpec<
  N extends ReportType = ReportType,
  P extends TObject = TObject,
  Q extends string = string,
> {
  /** The name a request gives as `type`. */
  name: N;
  /** What the rows are, as the route and the OpenAPI document say it: Markdown, one sentence. */
  description: string;
  /**
   * The parameters a request may give: an object schema that refuses other members, each
   * property described, with a `default` where one is fixed (the request fills it in).
   */
  parameters: P;
  /**
   * The parameters a run reads, from those the schema accepted (its defaults filled in): what
   * they leave open is fixed here (the instant the report is as of, say), so that a run resumed
   * later reads the same rows. A rule the schema cannot state refuses them instead, with field
   * errors pointing into the parameters (`/until`). Without it, the accepted parameters.
   */
  settle?(given: Static<P>, now: string): ReportParameters | FieldError[];
  /** The columns of each row, in order: the CSV header, and the members of each JSON row. */
  columns: readonly string[];
  /** The type's queries, by file name in cypher/reports/ (without `.cypher`). */
  queries: readonly Q[];
  /** Where the rows of a report with these (settled) parameters come from. */
  source(parameters: ReportParameters, context: SourceContext): RowSource<Q>;
}

/** A report type's module, its schema's static type and its query names inferred. */
export function defineReportType<N extends ReportType, P extends TObject, const Q extends string = never>(
  spec: ReportTypeSpec<N, P, Q>,
): ReportTypeSpec<N, P, Q> {
  return spec;
}
