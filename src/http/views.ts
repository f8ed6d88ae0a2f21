import type { TObject } from '@sinclair/typebox';
import type { Principal } from '../principals/model.js';
import {
  CreatedPrincipal,
  PrincipalListItem,
  PrincipalSchema,
  UpdatedPrincipal,
} from '../schemas/principals.js';

/**
 * A principal as one response shows it: exactly the fields its schema lists, in that order.
 * `email` belongs to USER principals only; `deleted_at`/`deleted_by` appear once deleted.
 */
function projection(schema: TObject): (p: Principal) => Record<string, unknown> {
  const fields = Object.keys(schema.properties) as (keyof Principal)[];
  return (p) => {
    const out: Record<string, unknown> = {};
    for (const field of fields) {
      if (field === 'email' && p.type !== 'USER') continue;
      if ((field === 'deleted_at' || field === 'deleted_by') && p.status !== 'deleted') continue;
      out[field] = p[field];
    }
    return out;
  };
}

export const principalView = projection(PrincipalSchema);
export const principalListItem = projection(PrincipalListItem);
export const createdPrincipal = projection(CreatedPrincipal);
export const updatedPrincipal = projection(UpdatedPrincipal);

/**
 * The entity tag of a versioned resource: strong, from its version (`"v3"` for principals;
 * policies use the bare version, `"3"`, as the contract says).
 */
export function etagOf(resource: { version: number }, prefix = 'v'): string {
  return `"${prefix}${resource.version}"`;
}

/**
 * RFC 9110 If-Match as the versions a write may proceed from: undefined when any will do (no
 * header, or `*`), else those of the listed entity tags (none, if no tag is one of ours).
 */
export function ifMatchVersions(header: string | undefined, prefix = 'v'): number[] | undefined {
  if (header === undefined || header.trim() === '' || header.trim() === '*') return undefined;
  const versions: number[] = [];
  const tagPattern = new RegExp(`^"${prefix}([1-9][0-9]{0,15})"$`);
  for (const tag of header.split(',')) {
    const m = tagPattern.exec(tag.trim());
    if (m) versions.push(Number(m[1]));
  }
  return versions;
}
