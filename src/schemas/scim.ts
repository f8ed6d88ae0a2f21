import { Type } from '@sinclair/typebox';

/** SCIM messages as the OpenAPI document shows them; their contents follow RFC 7643/7644. */
export const ScimErrorSchema = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    status: Type.String({ description: 'The HTTP status, as a string' }),
    scimType: Type.Optional(Type.String()),
    detail: Type.Optional(Type.String()),
  },
  { title: 'ScimError', description: 'RFC 7644 §3.12 error' },
);

export const ScimResource = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    id: Type.Optional(Type.String()),
    meta: Type.Optional(Type.Object({ resourceType: Type.String() }, { additionalProperties: true })),
  },
  { additionalProperties: true, title: 'ScimResource', description: 'A SCIM resource (RFC 7643)' },
);

export const ScimListResponse = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    totalResults: Type.Integer({ minimum: 0 }),
    startIndex: Type.Integer({ minimum: 1 }),
    itemsPerPage: Type.Integer({ minimum: 0 }),
    Resources: Type.Array(ScimResource),
  },
  { additionalProperties: false, title: 'ScimListResponse' },
);

/** A request body as SCIM clients send it: read leniently by the SCIM service, not by schema. */
export const ScimBody = Type.Object({}, { additionalProperties: true, title: 'ScimRequest' });

export const ScimListQuery = Type.Object({
  filter: Type.Optional(Type.String({ maxLength: 4096 })),
  startIndex: Type.Optional(Type.Integer({ description: 'From 1; lower values count as 1' })),
  count: Type.Optional(Type.Integer({ description: 'Page size, at most 200; negative counts as 0' })),
  attributes: Type.Optional(Type.String({ maxLength: 4096 })),
  excludedAttributes: Type.Optional(Type.String({ maxLength: 4096 })),
});
