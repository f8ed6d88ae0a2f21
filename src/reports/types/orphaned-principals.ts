import { Type } from '@sinclair/typebox';
import { isLiving, orphanedRow } from '../principal-rows.js';
import { defineReportType } from '../report-type.js';
import { byIndexOrder } from '../sources.js';

/**
 * Living non-USER principals nobody answers for, and the AI agents acting for someone who is gone
 * (`DELEGATION_ORPHANED`), read from the decision index.
 */
export const orphanedPrincipals = defineReportType({
  name: 'orphaned_principals',
  description:
    'living non-USER principals whose owner is unset, names no principal, or is deprovisioned or deleted, and the AI agents flagged `DELEGATION_ORPHANED`',
  parameters: Type.Object({}, { additionalProperties: false }),
  columns: [
    'id',
    'type',
    'name',
    'status',
    'owner',
    'owner_state',
    'owner_id',
    'owner_name',
    'risk_score',
    'created_at',
    'delegation_orphaned',
    'acts_for',
  ],
  queries: [],
  source: (_parameters, { index, pageSize }) =>
    byIndexOrder(
      index,
      (table, row) => table.typeOf(row) !== 'USER' && isLiving(table, row),
      pageSize.principals,
      ({ table }, row, now) => orphanedRow(index, table, row, now),
      false,
    ),
});
