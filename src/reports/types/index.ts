import { REPORT_TYPES, type ReportType } from '../../vocabulary/report-types.js';
import type { ReportTypeSpec } from '../report-type.js';
import { accessReview } from './access-review.js';
import { auditLog } from './audit-log.js';
import { dormantPrincipals } from './dormant-principals.js';
import { orphanedPrincipals } from './orphaned-principals.js';
import { principalInventory } from './principal-inventory.js';

/**
 * The report types, one module each, by name. The names are the vocabulary's (REPORT_TYPES),
 * which the request and response schemas are made of: keyed by them, this record needs exactly
 * one module for each, and a module's `name` must be its key.
 *
 * A new type is its module here, its name in src/vocabulary/report-types.ts, its queries in
 * cypher/reports/, and its tests; the API reference (docs/api.md §6.2) and docs/audit.md list it,
 * and `npm run console:types` writes its request form into the console's types.
 */
const BY_NAME: { readonly [N in ReportType]: ReportTypeSpec<N> } = {
  access_review: accessReview,
  principal_inventory: principalInventory,
  dormant_principals: dormantPrincipals,
  orphaned_principals: orphanedPrincipals,
  audit_log: auditLog,
};

/** Every report type, in the vocabulary's order (the order the API reference lists them in). */
export const REPORT_TYPE_SPECS: readonly ReportTypeSpec[] = REPORT_TYPES.map((name) => BY_NAME[name]);

export function reportTypeSpec(name: ReportType): ReportTypeSpec {
  return BY_NAME[name];
}
