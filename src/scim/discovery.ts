import { ATTRIBUTE_TABLE, definitions, USER_RESOURCE } from './attributes.js';
import { MAX_RESULTS } from './users-service.js';
import { GROUP_SCHEMA, USER_SCHEMA, type AttributeDef } from './schema.js';
import type { ScimObject } from './resource.js';

const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

/**
 * What this service provider supports (RFC 7643 §5): exactly what it implements. Its
 * documentation is the service's OpenAPI document, beside `/scim/v2` under the same base URL.
 */
export function serviceProviderConfig(baseUrl: string): ScimObject {
  return {
    schemas: [SPC_SCHEMA],
    documentationUri: `${baseUrl.replace(/\/scim\/v2\/?$/, '')}/v1/openapi.json`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: "The connector's SCIM token, sent as Authorization: Bearer <token>",
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/ServiceProviderConfig` },
  };
}

export function resourceTypes(baseUrl: string): ScimObject[] {
  return [
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'USER principals provisioned by this connector',
      schema: USER_SCHEMA,
      schemaExtensions: Object.keys(USER_RESOURCE.extensions).map((schema) => ({ schema, required: false })),
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/User` },
    },
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'Groups provisioned by this connector',
      schema: GROUP_SCHEMA,
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/Group` },
    },
  ];
}

function attributeView(def: AttributeDef): ScimObject {
  return {
    name: def.name,
    type: def.type,
    multiValued: def.multiValued ?? false,
    description: def.description ?? '',
    required: def.required ?? false,
    caseExact: def.caseExact ?? false,
    mutability: def.mutability ?? 'readWrite',
    returned: def.returned ?? 'default',
    uniqueness: def.uniqueness ?? 'none',
    ...(def.canonicalValues && def.canonicalValues.length > 0
      ? { canonicalValues: def.canonicalValues }
      : {}),
    ...(def.referenceTypes ? { referenceTypes: def.referenceTypes } : {}),
    ...(def.subAttributes ? { subAttributes: def.subAttributes.map(attributeView) } : {}),
  };
}

/**
 * The schemas, generated from the attribute table (src/scim/attributes.ts): named and described
 * as RFC 7643 §8.7.1 and §8.7.2 name and describe them, with the attributes the table publishes.
 */
export function schemas(baseUrl: string): ScimObject[] {
  return ATTRIBUTE_TABLE.map((table) => ({
    schemas: [SCHEMA_SCHEMA],
    id: table.schema,
    name: table.name,
    description: table.description,
    attributes: definitions(table, 'published').map(attributeView),
    meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${table.schema}` },
  }));
}
