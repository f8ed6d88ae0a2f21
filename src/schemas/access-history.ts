import { Type, type Static } from '@sinclair/typebox';
import { DEFAULT_LIMIT, MAX_PAGE } from '../pagination.js';
import { ACTION_NAME_PATTERN, MAX_IDENTIFIER_LENGTH, RESOURCE_TYPE_PATTERN } from '../vocabulary/policies.js';
import { Id } from './common.js';
import { TraceStep } from './decisions.js';
import { literals } from './principals.js';

/** The most access changes one page holds. */
export const MAX_CHANGES_PAGE = 500;

/** How a policy behind a change reached the principal: as an explained `/access` says, or acting for another. */
const ChangeGrantSchema = Type.Object(
  {
    policy_id: Id('policy'),
    policy_name: Type.String(),
    via: literals(['principal', 'group', 'match', 'delegation'], {
      description:
        'The policy names the principal, one of its groups, or matches it; `delegation`: the principal reaches it acting for `on_behalf_of`',
    }),
    path: Type.Optional(
      Type.Array(TraceStep, {
        description:
          'For group grants, the membership path principal → group → … → group; for `delegation`, the delegate → the delegator',
      }),
    ),
  },
  { additionalProperties: false, title: 'AccessChangeGrant' },
);

const PrincipalRef = Type.Object(
  { id: Type.String(), name: Type.String(), type: Type.String() },
  { additionalProperties: false },
);

export const AccessChangeSchema = Type.Object(
  {
    id: Id('access_change'),
    at: Type.String({ format: 'date-time', description: 'When the change that caused it committed' }),
    principal: PrincipalRef,
    on_behalf_of: Type.Optional(
      Type.Object(
        { id: Type.String(), name: Type.String(), type: Type.String() },
        {
          additionalProperties: false,
          description:
            'Access while acting for this principal (`GET /v1/principals/{id}/access?on_behalf_of=`), which a delegation made, revoked or expired moved',
        },
      ),
    ),
    resource: Type.Object(
      {
        type: Type.String(),
        identifier: Type.String(),
        pattern: Type.Optional(
          Type.Literal(true, { description: 'A policy glob: access to what it matches, registered or not' }),
        ),
      },
      { additionalProperties: false },
    ),
    actions_gained: Type.Array(Type.String()),
    actions_lost: Type.Array(Type.String()),
    via: Type.Array(ChangeGrantSchema, {
      description:
        'How the policies behind the change reach the principal: after it for what was gained, before it for what was lost',
    }),
    cause: Type.Object(
      {
        event_id: Id('event'),
        event_type: Type.String(),
        actor: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
      },
      { additionalProperties: false, description: 'The audit event of the change that moved the access' },
    ),
  },
  { additionalProperties: false, title: 'AccessChange' },
);
export type AccessChangeBody = Static<typeof AccessChangeSchema>;

export const AccessChangeListQuery = Type.Object({
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE, description: 'Page number, from 1; not with `cursor`' }),
  ),
  cursor: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9_-]{1,200}$',
      description: 'The `next_cursor` of the page before: the changes recorded after it',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_CHANGES_PAGE,
      description: `Page size, 1-${MAX_CHANGES_PAGE} (default ${DEFAULT_LIMIT})`,
    }),
  ),
  principal_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  resource_type: Type.Optional(Type.String({ pattern: RESOURCE_TYPE_PATTERN })),
  identifier: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH })),
  action: Type.Optional(Type.String({ pattern: ACTION_NAME_PATTERN, description: 'Gained or lost' })),
  event_id: Type.Optional(Id('event', 'The audit event that caused the changes')),
  since: Type.Optional(
    Type.String({ format: 'date-time', maxLength: 64, description: 'Changes at or after (RFC 3339)' }),
  ),
  until: Type.Optional(
    Type.String({ format: 'date-time', maxLength: 64, description: 'Changes before (RFC 3339)' }),
  ),
});

export const AccessChangeList = Type.Object(
  {
    data: Type.Array(AccessChangeSchema),
    pagination: Type.Object(
      {
        total: Type.Integer({ minimum: 0, description: 'Changes matching the filters' }),
        page: Type.Optional(Type.Integer({ minimum: 1, description: 'Left out when paging by cursor' })),
        per_page: Type.Integer({ minimum: 1, maximum: MAX_CHANGES_PAGE }),
        pages: Type.Integer({ minimum: 0 }),
        next_cursor: Type.Union([Type.String(), Type.Null()], {
          description:
            'Pass as `cursor` for the changes recorded after this page (to follow the history, poll with it); null when the page is empty and no cursor was given',
        }),
        horizon: Type.String({
          format: 'date-time',
          description: 'Changes before this instant are no longer kept (`ACCESS_HISTORY_DAYS`)',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'AccessChangeList' },
);
