import type { GroupService } from '../../groups/service.js';
import {
  CreateGroupBody,
  DeletedGroup,
  GroupIdParams,
  GroupList,
  GroupListQuery,
  GroupMemberList,
  GroupMemberParams,
  GroupMembersQuery,
  GroupMembership,
  GroupSchema,
  PatchGroupBody,
  RemovedGroupMember,
} from '../../schemas/groups.js';
import { pageOf } from '../../pagination.js';
import { listBody, operationContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';

const READ_ONLY = {
  description: '`PRINCIPAL_MANAGED_BY_CONNECTOR`: connector groups are read-only, or `INSUFFICIENT_SCOPE`',
};

export function groupRoutes(deps: { groups: GroupService }): AnyRoute[] {
  const read = { tags: ['Groups'], auth: { scope: 'groups:read' as const }, rateLimit: 'standard' as const };
  const write = {
    tags: ['Groups'],
    auth: { scope: 'groups:write' as const },
    rateLimit: 'standard' as const,
  };
  return [
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/groups',
      operationId: 'listGroups',
      summary: 'List groups',
      description: 'Ordered by `name`, then `id`. `connector_source` selects the groups of one connector.',
      query: GroupListQuery,
      responses: { 200: { description: 'A page of groups', schema: GroupList } },
      handler: async ({ query }) => ({
        body: listBody(await deps.groups.list({ connectorSource: query.connector_source }, pageOf(query))),
      }),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      path: '/v1/groups',
      operationId: 'createGroup',
      summary: 'Create a group',
      description: 'Names are unique among API groups, regardless of case and surrounding space.',
      body: CreateGroupBody,
      responses: {
        201: { description: 'Created', schema: GroupSchema },
        409: { description: '`CONFLICT`: a group with this name exists' },
      },
      handler: async ({ ctx, body }) => {
        const group = await deps.groups.create(body, operationContext(ctx));
        return { status: 201, body: group, headers: { Location: `/v1/groups/${group.id}` } };
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/groups/{id}',
      operationId: 'getGroup',
      summary: 'Get a group',
      params: GroupIdParams,
      responses: { 200: { description: 'The group', schema: GroupSchema } },
      handler: async ({ params }) => ({ body: await deps.groups.get(params.id) }),
    }),
    defineRoute({
      ...write,
      method: 'PATCH',
      path: '/v1/groups/{id}',
      operationId: 'updateGroup',
      summary: 'Rename a group or change its description',
      description: '`description: null` clears the description. Connector groups are read-only.',
      params: GroupIdParams,
      body: PatchGroupBody,
      responses: {
        200: { description: 'Updated', schema: GroupSchema },
        403: READ_ONLY,
        409: { description: '`CONFLICT`: a group with this name exists' },
      },
      handler: async ({ ctx, params, body }) => ({
        body: await deps.groups.update(params.id, body, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      path: '/v1/groups/{id}',
      operationId: 'deleteGroup',
      summary: 'Delete a group',
      description:
        'The group and its memberships go (its members leave it, and it leaves the groups it was nested in); a later GET answers 404. Connector groups are read-only.',
      params: GroupIdParams,
      responses: { 200: { description: 'Deleted', schema: DeletedGroup }, 403: READ_ONLY },
      handler: async ({ ctx, params }) => ({
        body: await deps.groups.delete(params.id, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/groups/{id}/members',
      operationId: 'listGroupMembers',
      summary: 'List the members of a group',
      description:
        'Principals (`{id, name, type, email}`, email null unless USER) and nested groups (`type: "GROUP"`), ordered by `name`, then `id`. With `transitive=true`, every distinct principal and group reachable through nesting. Deleted principals never appear.',
      params: GroupIdParams,
      query: GroupMembersQuery,
      responses: { 200: { description: 'A page of members', schema: GroupMemberList } },
      handler: async ({ params, query }) => ({
        body: listBody(await deps.groups.members(params.id, query.transitive ?? false, pageOf(query))),
      }),
    }),
    defineRoute({
      ...write,
      method: 'PUT',
      path: '/v1/groups/{id}/members/{member_id}',
      operationId: 'addGroupMember',
      summary: 'Add a principal or a group to a group',
      description:
        'Idempotent: an existing membership answers 200 with its original `added_at`. `member_id` is a principal (`prn_`) or a group (`grp_`); nesting may not form a cycle nor exceed 16 levels.',
      params: GroupMemberParams,
      responses: {
        200: { description: 'The membership', schema: GroupMembership },
        403: READ_ONLY,
        404: { description: '`NOT_FOUND`: the group or the member does not exist' },
        409: {
          description:
            '`PRINCIPAL_DELETED` for a deleted principal; `CONFLICT` for nesting deeper than 16 levels',
        },
        422: { description: '`CYCLE_DETECTED`: the group is the member or is nested inside it' },
      },
      handler: async ({ ctx, params }) => ({
        body: await deps.groups.addMember(params.id, params.member_id, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      path: '/v1/groups/{id}/members/{member_id}',
      operationId: 'removeGroupMember',
      summary: 'Remove a member from a group',
      description: 'Idempotent: `removed` is false when the principal or group was not a member.',
      params: GroupMemberParams,
      responses: {
        200: { description: 'Removed, or nothing to remove', schema: RemovedGroupMember },
        403: READ_ONLY,
      },
      handler: async ({ ctx, params }) => ({
        body: await deps.groups.removeMember(params.id, params.member_id, operationContext(ctx)),
      }),
    }),
  ];
}
