import { Type, type Static } from '@sinclair/typebox';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';
import { AttributesInputSchema, AttributesSchema } from './principals.js';
import { MAX_IDENTIFIER_LENGTH, RESOURCE_TYPE_PATTERN } from '../vocabulary/policies.js';

export const ResourceSchema = Type.Object(
  {
    type: Type.String(),
    identifier: Type.String(),
    attributes: AttributesSchema,
    owner_id: Type.Union([Type.String(), Type.Null()], { description: 'The principal that owns it' }),
    registered: Type.Boolean({
      description:
        'Registered through PUT; a resource only named by a policy exists but is not registered (globs do not list it)',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: 'Resource' },
);
export type Resource = Static<typeof ResourceSchema>;

export const ResourceList = Paginated(ResourceSchema, 'ResourceList');

export const ResourceParams = Type.Object({
  type: Type.String({ pattern: RESOURCE_TYPE_PATTERN, description: `Matches ${RESOURCE_TYPE_PATTERN}` }),
  identifier: Type.String({
    minLength: 1,
    maxLength: MAX_IDENTIFIER_LENGTH,
    pattern: '^[^\\u0000-\\u001f*]+$',
    description: 'URL-encoded in the path; 1-512 characters, no `*`',
  }),
});

export const PutResourceBody = Type.Object(
  {
    attributes: Type.Optional(AttributesInputSchema),
    owner_id: Type.Optional(Type.Union([Id('principal'), Type.Null()], { description: '`null` clears it' })),
  },
  { additionalProperties: false, title: 'PutResource' },
);
export type PutResource = Static<typeof PutResourceBody>;

export const ResourceListQuery = Type.Object({
  ...PageQuery,
  type: Type.Optional(Type.String({ pattern: RESOURCE_TYPE_PATTERN })),
  registered: Type.Optional(Type.Boolean({ description: 'Only registered, or only named, resources' })),
});

export const DeletedResource = Type.Object(
  {
    type: Type.String(),
    identifier: Type.String(),
    deleted: Type.Literal(true),
    named_by_policies: Type.Integer({
      minimum: 0,
      description:
        'Active or inactive policies still naming it: the resource stays, unregistered, while any does',
    }),
  },
  { additionalProperties: false, title: 'DeletedResource' },
);
