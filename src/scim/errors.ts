/** The `scimType` values of RFC 7644 §3.12. */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/**
 * An error of the SCIM protocol: the status and `scimType` are part of the SCIM error body
 * (RFC 7644 §3.12), so the domain states them; the edge only renders them.
 */
export class ScimError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 412 | 413 | 500 | 501,
    readonly scimType: ScimType | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ScimError';
  }
}

export const invalidValue = (message: string): ScimError => new ScimError(400, 'invalidValue', message);
export const scimNotFound = (kind: 'User' | 'Group', id: string): ScimError =>
  new ScimError(404, undefined, `${kind} ${id} not found`);
