import { groupRepository, type Group } from '../../src/groups/repository.js';
import { newId } from '../../src/ids.js';
import { nowIso } from '../../src/time.js';
import type { TestApp } from './app.js';

export interface InsertConnectorGroup {
  name: string;
  description?: string;
  connectorSource?: string;
  /** The id of the connector it belongs to; by default one per connectorSource. */
  connectorRef?: string;
  connectorId?: string;
  /** Principal or group ids to make direct members. */
  members?: string[];
}

/**
 * Writes a connector-sourced group straight through the repository, as an identity connector
 * will: the API refuses to create or change such groups.
 */
export async function insertConnectorGroup(app: TestApp, input: InsertConnectorGroup): Promise<Group> {
  return app.runtime.db.write('test/insert_connector_group', async (tx) => {
    const group = await groupRepository.create(
      tx,
      {
        id: newId('group'),
        name: input.name,
        description: input.description ?? null,
        source: 'connector',
        connectorSource: input.connectorSource ?? 'okta',
        connectorRef: input.connectorRef ?? `con_${input.connectorSource ?? 'okta'}`,
        connectorId: input.connectorId ?? `00g${Math.random().toString(36).slice(2, 12)}`,
        createdBy: 'con_test',
      },
      nowIso(),
    );
    for (const memberId of input.members ?? []) {
      await groupRepository.addMember(tx, group.id, memberId, 'con_test', nowIso());
    }
    return { ...group, member_count: input.members?.length ?? 0 };
  });
}
