import { findNamed } from './names.js';

/**
 * The SCIM schemas this service provider speaks (RFC 7643 §4 core User and Group, §4.3 the
 * enterprise extension), and the shape of an attribute's definition as `/Schemas` publishes it
 * and reading a client's resource relies on (canonical attribute names, which are multi-valued,
 * which compare case-exactly). The definitions themselves are generated from the attribute table
 * (src/scim/attributes.ts).
 */
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SEARCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

export interface AttributeDef {
  name: string;
  type: 'string' | 'boolean' | 'decimal' | 'integer' | 'dateTime' | 'reference' | 'binary' | 'complex';
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned?: 'always' | 'never' | 'default' | 'request';
  uniqueness?: 'none' | 'server' | 'global';
  referenceTypes?: string[];
  canonicalValues?: string[];
  description?: string;
  subAttributes?: AttributeDef[];
}

/** Looks a definition up by name, regardless of case. */
export function findAttribute(defs: readonly AttributeDef[], name: string): AttributeDef | undefined {
  return findNamed(defs, name, (d) => d.name);
}

/**
 * The definitions a resource type is read and patched with: its core schema's attributes (the
 * common ones included) and each extension's, by URN.
 */
export interface ResourceSchema {
  readonly core: string;
  readonly attributes: readonly AttributeDef[];
  readonly extensions: Readonly<Record<string, readonly AttributeDef[]>>;
}
