import { Type, type Static } from '@sinclair/typebox';
import { CONNECTOR_PROFILES, DEFAULT_CONNECTOR_PROFILE } from '../vocabulary/connector-profiles.js';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';

/** Becomes the `connector_source` of what the connector provisions. */
export const CONNECTOR_NAME_PATTERN = '^[a-z][a-z0-9_-]{0,63}$';

const PROFILE_DESCRIPTION =
  "The SCIM client's dialect where the vendors' reference tests disagree: `generic`, `okta` or `entra` (docs/scim.md, Profiles)";
const profile = (options: { default?: string } = {}) =>
  Type.Union(
    CONNECTOR_PROFILES.map((p) => Type.Literal(p)),
    { description: PROFILE_DESCRIPTION, ...options },
  );
const Description = Type.String({ maxLength: 1024 });

const connectorFields = {
  id: Id('connector'),
  name: Type.String({ pattern: CONNECTOR_NAME_PATTERN }),
  description: Type.Union([Type.String(), Type.Null()]),
  profile: profile(),
  status: Type.Union([Type.Literal('active'), Type.Literal('deleted')]),
  scim_base_url: Type.String({ description: 'Where the identity provider sends SCIM 2.0 requests' }),
  created_at: Timestamp,
  created_by: Type.String({ description: 'Client id of the creator' }),
  token_rotated_at: Timestamp,
  deleted_at: Type.Optional(Timestamp),
  deleted_by: Type.Optional(Type.String()),
};

export const ConnectorSchema = Type.Object(connectorFields, {
  additionalProperties: false,
  title: 'Connector',
});
export type ConnectorView = Static<typeof ConnectorSchema>;

export const CreatedConnector = Type.Object(
  {
    ...connectorFields,
    token: Type.String({ description: 'The SCIM bearer token: shown only in this response' }),
  },
  { additionalProperties: false, title: 'CreatedConnector' },
);

export const CreateConnectorBody = Type.Object(
  {
    name: Type.String({ pattern: CONNECTOR_NAME_PATTERN }),
    description: Type.Optional(Description),
    profile: Type.Optional(profile({ default: DEFAULT_CONNECTOR_PROFILE })),
  },
  { additionalProperties: false, title: 'CreateConnector' },
);

export const UpdateConnectorBody = Type.Object(
  {
    profile: Type.Optional(profile()),
    description: Type.Optional(Type.Union([Description, Type.Null()], { description: '`null` clears it' })),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateConnector' },
);
export type UpdateConnectorInput = Static<typeof UpdateConnectorBody>;

export const ConnectorToken = Type.Object(
  { token: Type.String({ description: 'The new SCIM bearer token: shown only in this response' }) },
  { additionalProperties: false, title: 'ConnectorToken' },
);

export const ConnectorListQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('deleted')], { default: 'active' })),
});

export const ConnectorList = Paginated(ConnectorSchema, 'ConnectorList');

export const DeletedConnector = Type.Object(
  { id: Id('connector'), status: Type.Literal('deleted'), deleted_at: Timestamp, deleted_by: Type.String() },
  { additionalProperties: false, title: 'DeletedConnector' },
);
export type DeletedConnectorView = Static<typeof DeletedConnector>;

export const SyncCountsSchema = Type.Object(
  {
    lines: Type.Integer(),
    invalid: Type.Integer({ description: 'Lines that could not be read (see `errors`)' }),
    users_created: Type.Integer(),
    users_updated: Type.Integer(),
    users_unchanged: Type.Integer(),
    users_deprovisioned: Type.Integer(),
    groups_created: Type.Integer(),
    groups_updated: Type.Integer(),
    groups_unchanged: Type.Integer(),
    groups_deleted: Type.Integer(),
  },
  { additionalProperties: false, title: 'SyncCounts' },
);

export const SyncSchema = Type.Object(
  {
    id: Id('job'),
    connector_id: Id('connector'),
    status: Type.Union(['pending', 'running', 'completed', 'failed'].map((s) => Type.Literal(s))),
    requested_at: Timestamp,
    requested_by: Type.String(),
    completed_at: Type.Union([Timestamp, Type.Null()]),
    bytes: Type.Integer({ description: 'Size of the snapshot' }),
    progress: Type.Object(
      {
        phase: Type.Union(
          ['queued', 'reading', 'users', 'deprovisioning', 'managers', 'groups', 'done'].map((s) =>
            Type.Literal(s),
          ),
        ),
        processed: Type.Integer(),
        total: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    counts: Type.Union([SyncCountsSchema, Type.Null()]),
    errors: Type.Array(
      Type.Object({ line: Type.Integer(), detail: Type.String() }, { additionalProperties: false }),
      { description: 'The first 100 lines that could not be applied' },
    ),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the sync failed, when it did' }),
  },
  { additionalProperties: false, title: 'ConnectorSync' },
);
