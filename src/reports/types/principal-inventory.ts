import { Type } from '@sinclair/typebox';
import { inventoryRow } from '../principal-rows.js';
import { defineReportType } from '../report-type.js';
import { byIndexOrder, WHO } from '../sources.js';

/** Every principal, read from the decision index, with its stored risk read from Neo4j. */
export const principalInventory = defineReportType({
  name: 'principal_inventory',
  description: 'every principal, with its owner, manager, group count and risk',
  parameters: Type.Object({}, { additionalProperties: false }),
  columns: [
    ...WHO,
    'manager_id',
    'groups',
    'risk_score',
    'risk_factors',
    'last_login',
    'created_at',
    'updated_at',
  ],
  queries: [],
  source: (_parameters, { index, pageSize }) =>
    byIndexOrder(
      index,
      (table, row) => table.has(row),
      pageSize.principals,
      ({ table, groups }, row) => inventoryRow(table, groups, row),
      true,
    ),
});
