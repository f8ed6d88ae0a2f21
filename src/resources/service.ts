import { diffMaps, type Changes, type OperationContext } from '../audit/audit.js';
import type { Reader, Transactions } from '../db/database.js';
import { AppError, notFound } from '../errors/errors.js';
import type { EventRecorder } from '../events/sink.js';
import type { Page, Paged } from '../pagination.js';
import type { PutResource } from '../schemas/resources.js';
import { nowIso } from '../time.js';
import { resourceRepository, type Resource } from './repository.js';

export interface DeletedResource {
  type: string;
  identifier: string;
  deleted: true;
  named_by_policies: number;
}

/** The resource queries the service runs: unit tests give it an in-memory stand-in. */
export type ResourceRepository = Pick<
  typeof resourceRepository,
  'lock' | 'register' | 'unregister' | 'get' | 'list'
>;

/** What registering a resource reads of its owner: whether the principal exists and is not deleted. */
export interface OwnerLookup {
  get(tx: Reader, id: string): Promise<{ status: string } | undefined>;
}

const targetOf = (type: string, identifier: string) => ({ type: 'resource', id: `${type}:${identifier}` });

/**
 * Resources policies grant on (docs/api.md §5.7). One exists as soon as a policy names it exactly;
 * registering it gives it attributes (read by `resource.attributes.*` conditions), an owner,
 * and makes it visible to globs.
 */
export class ResourceService {
  constructor(
    private readonly db: Transactions,
    private readonly events: EventRecorder,
    /** Owners are principals, read through their owner's lookup (src/principals/lookup.ts). */
    private readonly principals: OwnerLookup,
    private readonly repo: ResourceRepository = resourceRepository,
  ) {}

  /** Registers or re-registers: attributes and owner are replaced. `created` when it is new. */
  async put(
    type: string,
    identifier: string,
    input: PutResource,
    op: OperationContext,
  ): Promise<{ resource: Resource; created: boolean }> {
    const attributes = input.attributes ?? {};
    const ownerId = input.owner_id ?? null;
    return this.db.write('resources/put', async (tx) => {
      if (ownerId !== null) {
        const owner = await this.principals.get(tx, ownerId);
        if (!owner || owner.status === 'deleted') {
          throw new AppError('REFERENCE_NOT_FOUND', `principal ${ownerId} does not exist`, {
            errors: [{ pointer: '/owner_id', message: 'names no existing principal' }],
          });
        }
      }
      const now = nowIso();
      const { resource: before, created } = await this.repo.lock(tx, type, identifier, now);
      const changes: Changes = {
        ...diffMaps(before.registered ? before.attributes : {}, attributes, 'attributes'),
      };
      const ownerBefore = before.registered ? before.owner_id : null;
      if (ownerBefore !== ownerId) {
        changes['owner_id'] = {
          ...(ownerBefore ? { from: ownerBefore } : {}),
          ...(ownerId ? { to: ownerId } : {}),
        };
      }
      const newlyRegistered = !before.registered;
      if (!newlyRegistered && Object.keys(changes).length === 0) return { resource: before, created: false };
      const resource = await this.repo.register(tx, { type, identifier }, attributes, ownerId, now);
      this.events.record(tx, op, {
        type: newlyRegistered ? 'resource.created' : 'resource.updated',
        target: targetOf(type, identifier),
        changes,
      });
      return { resource, created };
    });
  }

  async get(type: string, identifier: string): Promise<Resource> {
    const resource = await this.repo.get(this.db, type, identifier);
    if (!resource) throw notFound('resource', `${type}:${identifier}`);
    return resource;
  }

  async list(
    filter: { type?: string | undefined; registered?: boolean | undefined },
    page: Page,
  ): Promise<Paged<Resource>> {
    const { total, resources } = await this.repo.list(
      this.db,
      { type: filter.type ?? null, registered: filter.registered ?? null },
      page,
    );
    return { total, items: resources, page };
  }

  /**
   * Takes a registration back. The resource stays, unregistered, while a policy names it; a
   * resource that is only named has no registration to delete (404).
   */
  async delete(type: string, identifier: string, op: OperationContext): Promise<DeletedResource> {
    return this.db.write('resources/delete', async (tx) => {
      const current = await this.repo.get(tx, type, identifier);
      if (!current || !current.registered) throw notFound('registered resource', `${type}:${identifier}`);
      const result = await this.repo.unregister(tx, type, identifier, nowIso());
      this.events.record(tx, op, {
        type: 'resource.deleted',
        target: targetOf(type, identifier),
        changes: {
          ...diffMaps(current.attributes, {}, 'attributes'),
          ...(current.owner_id ? { owner_id: { from: current.owner_id } } : {}),
        },
      });
      return { type, identifier, deleted: true, named_by_policies: result?.named ?? 0 };
    });
  }
}
