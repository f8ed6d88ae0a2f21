import { Type } from '@sinclair/typebox';
import { dormantRow, isLiving, unseenSince } from '../principal-rows.js';
import { defineReportType } from '../report-type.js';
import { byIndexOrder, WHO } from '../sources.js';

const DEFAULT_DAYS = 90;

/**
 * Living principals not seen for `days`: the request fixes the instant it is as of (`as_of`),
 * so that a run resumed later, or on another instance, draws the line at the same time.
 */
export const dormantPrincipals = defineReportType({
  name: 'dormant_principals',
  description: 'living principals not seen (`last_login`, else `created_at`) for `days`',
  parameters: Type.Object(
    {
      days: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 36_500,
          default: DEFAULT_DAYS,
          description: `Days without a login (or, for one never seen, since its creation); default ${DEFAULT_DAYS}`,
        }),
      ),
    },
    { additionalProperties: false },
  ),
  settle: ({ days = DEFAULT_DAYS }, now) => ({ days, as_of: now }),
  columns: [...WHO, 'last_login', 'created_at', 'days_inactive', 'risk_score'],
  queries: [],
  source: (parameters, { index, pageSize }) => {
    const asOf = Date.parse(String(parameters['as_of']));
    const before = asOf - Number(parameters['days']) * 86_400_000;
    return byIndexOrder(
      index,
      isLiving,
      pageSize.principals,
      ({ table }, row) => (unseenSince(table, row, before) ? dormantRow(table, row, asOf) : undefined),
      false,
    );
  },
});
