/** The kinds of report (a leaf module: the schemas and the report code both read it). */
export const REPORT_TYPES = [
  'access_review',
  'principal_inventory',
  'dormant_principals',
  'orphaned_principals',
  'audit_log',
] as const;
export type ReportType = (typeof REPORT_TYPES)[number];
