import { Type, type Static, type TString } from '@sinclair/typebox';
import { ID_PREFIXES, ULID_PATTERN } from '../ids.js';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';

/** `*`, an event type (`policy.updated`) or every type of a kind (`principal.*`). */
const EventPattern = Type.String({
  pattern: '^(\\*|[a-z_]+\\.(\\*|[a-z_]+))$',
  maxLength: 128,
  description: '`*`, an audit event type such as `policy.updated`, or `kind.*` such as `principal.*`',
});

const WebhookStatus = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);

const webhookFields = {
  id: Id('webhook'),
  url: Type.String(),
  events: Type.Array(EventPattern),
  description: Type.Union([Type.String(), Type.Null()]),
  status: WebhookStatus,
  created_at: Timestamp,
  created_by: Type.String({ description: 'Client id of the creator' }),
  last_delivery_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When a delivery was last attempted',
  }),
  failure_count: Type.Integer({ minimum: 0, description: 'Attempts that failed since the last success' }),
  failing_since: Type.Optional(Timestamp),
  disabled_at: Type.Optional(Timestamp),
  disabled_reason: Type.Optional(Type.String()),
  secret_rotated_at: Type.Optional(Timestamp),
};

export const WebhookSchema = Type.Object(webhookFields, { additionalProperties: false, title: 'Webhook' });
export type WebhookView = Static<typeof WebhookSchema>;

export const CreatedWebhook = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({
      description: 'The signing secret (`whsec_` + base64): shown only in this response',
    }),
  },
  { additionalProperties: false, title: 'CreatedWebhook' },
);

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'https URL of the receiver; it must not resolve to a loopback, private, link-local or other internal address',
});
const Events = Type.Array(EventPattern, { minItems: 1, maxItems: 64, uniqueItems: true });
const Description = Type.String({ maxLength: 1024 });

export const CreateWebhookBody = Type.Object(
  { url: Url, events: Events, description: Type.Optional(Description) },
  { additionalProperties: false, title: 'CreateWebhook' },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    status: Type.Optional(WebhookStatus),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateWebhook' },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const WebhookListQuery = Type.Object({ ...PageQuery, status: Type.Optional(WebhookStatus) });
export const WebhookList = Paginated(WebhookSchema, 'WebhookList');

export const DeletedWebhook = Type.Object(
  { id: Id('webhook'), status: Type.Literal('deleted'), deleted_at: Timestamp, deleted_by: Type.String() },
  { additionalProperties: false, title: 'DeletedWebhook' },
);

export const WebhookSecret = Type.Object(
  {
    secret: Type.String({ description: 'The new signing secret: shown only in this response' }),
    previous_secret_expires_at: Timestamp,
  },
  { additionalProperties: false, title: 'WebhookSecret' },
);

export const WebhookTestResult = Type.Object(
  {
    delivery_id: Id('delivery'),
    success: Type.Boolean(),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Integer({ minimum: 0 }),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false, title: 'WebhookTestResult' },
);

/**
 * What a delivery carried: an audit event, or an `access.changed` message, named by the id of
 * its first access change (its `webhook-id`).
 */
const DeliveredId = (description?: string): TString =>
  Type.String({
    pattern: `^(${ID_PREFIXES.event}|${ID_PREFIXES.access_change})_${ULID_PATTERN}$`,
    description:
      description ??
      'The event delivered (evt_…), or for `access.changed` the id of its first change (acc_…)',
  });

export const DeliverySchema = Type.Object(
  {
    id: Id('delivery'),
    event_id: DeliveredId(),
    event_type: Type.String(),
    attempt: Type.Integer({ minimum: 1 }),
    success: Type.Boolean(),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    duration_ms: Type.Integer({ minimum: 0 }),
    attempted_at: Timestamp,
    next_attempt_at: Type.Union([Timestamp, Type.Null()], {
      description: 'When the event is tried again; null once it is delivered or given up',
    }),
  },
  { additionalProperties: false, title: 'WebhookDelivery' },
);
export type DeliveryView = Static<typeof DeliverySchema>;

export const DeliveryListQuery = Type.Object({
  ...PageQuery,
  event_id: Type.Optional(
    DeliveredId('Only the attempts of this event (evt_…) or access.changed message (acc_…)'),
  ),
  success: Type.Optional(Type.Boolean()),
});
export const DeliveryList = Paginated(DeliverySchema, 'WebhookDeliveryList');
