import type { Static } from '@sinclair/typebox';
import type { DeletedPolicy as DeletedPolicySchema } from '../schemas/policies.js';
import { SYSTEM_CONTEXT, type Changes, type OperationContext } from '../audit/audit.js';
import type { Database, Tx } from '../db/database.js';
import { AppError, conflict, notFound } from '../errors/errors.js';
import type { EventSink } from '../events/sink.js';
import { newId } from '../ids.js';
import type { Page, Paged } from '../pagination.js';
import { POLICY_STATUSES } from '../vocabulary/policies.js';
import { nowIso } from '../time.js';
import { bodyOf, checkPolicyBody, type Policy, type PolicyBody } from './model.js';
import { policyRepository as repo, type PolicyVersionRow } from './repository.js';

/** Policies whose expiry one transaction records at most. */
const EXPIRY_BATCH = 500;

/** What deleting a policy answers. */
export type DeletedPolicy = Static<typeof DeletedPolicySchema>;

/** Turns the name_key constraint violation into a message that names the clash. */
async function uniqueName<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError && err.code === 'CONFLICT') {
      throw conflict(`a policy named "${name.trim()}" already exists`);
    }
    throw err;
  }
}

/**
 * A conditional write proceeds only from one of the versions the caller expects (undefined:
 * from any version).
 */
function assertVersion(expected: readonly number[] | undefined, current: Policy): void {
  if (expected === undefined || expected.includes(current.version)) return;
  throw new AppError(
    'PRECONDITION_FAILED',
    `policy ${current.id} has changed: it is at version ${current.version}, not the one expected`,
  );
}

/** The fields of two bodies that differ, for the audit trail. */
function bodyChanges(before: PolicyBody | undefined, after: PolicyBody | undefined): Changes {
  const fields: [string, (b: PolicyBody) => unknown][] = [
    ['name', (b) => b.name],
    ['description', (b) => b.description ?? null],
    ['effect', (b) => b.effect],
    ['status', (b) => b.status ?? 'active'],
    ['subjects.principals', (b) => b.subjects.principals ?? []],
    ['subjects.groups', (b) => b.subjects.groups ?? []],
    ['subjects.match', (b) => b.subjects.match ?? null],
    ['actions', (b) => b.actions],
    ['resources', (b) => b.resources.map((r) => `${r.type}:${r.identifier}`)],
    ['conditions', (b) => b.conditions ?? {}],
    ['valid_from', (b) => b.valid_from ?? null],
    ['valid_until', (b) => b.valid_until ?? null],
  ];
  const changes: Changes = {};
  for (const [field, read] of fields) {
    const from = before ? read(before) : undefined;
    const to = after ? read(after) : undefined;
    if (JSON.stringify(from) === JSON.stringify(to)) continue;
    changes[field] = { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
  }
  return changes;
}

/** Policies: versioned, uniquely named, each change audited in its own transaction. */
export class PolicyService {
  constructor(
    private readonly db: Database,
    private readonly events: EventSink,
  ) {}

  async create(input: PolicyBody, op: OperationContext): Promise<Policy> {
    const body = checkPolicyBody(input);
    const id = newId('policy');
    return uniqueName(body.name, () =>
      this.db.write('policies/create', async (tx) => {
        // A retry after a lost commit answer returns what the first run committed.
        const committed = tx.attempt > 1 ? await repo.get(tx, id) : undefined;
        if (committed) return committed;
        const policy = await repo.create(tx, id, body, op.actor.id, nowIso());
        this.events.record(tx, op, {
          type: 'policy.created',
          target: { type: 'policy', id },
          changes: { ...bodyChanges(undefined, bodyOf(policy)), version: { to: 1 } },
        });
        return policy;
      }),
    );
  }

  async get(id: string): Promise<Policy> {
    const policy = await repo.get(this.db, id);
    if (!policy) throw notFound('policy', id);
    return policy;
  }

  async list(
    filter: { status?: Policy['status'] | undefined; effect?: string | undefined },
    page: Page,
  ): Promise<Paged<Policy>> {
    const statuses = filter.status ? [filter.status] : [...POLICY_STATUSES];
    const { total, policies } = await repo.list(this.db, { statuses, effect: filter.effect ?? null }, page);
    return { total, items: policies, page };
  }

  /** A full replacement: the next version. */
  async replace(
    id: string,
    input: PolicyBody,
    expectedVersions: readonly number[] | undefined,
    op: OperationContext,
  ): Promise<Policy> {
    const body = checkPolicyBody(input);
    return uniqueName(body.name, () =>
      this.db.write('policies/update', async (tx) => {
        const current = await this.lockLive(tx, id);
        assertVersion(expectedVersions, current);
        const changes = bodyChanges(bodyOf(current), body);
        const policy = await repo.replace(tx, id, body, op.actor.id, nowIso());
        this.events.record(tx, op, {
          type: 'policy.updated',
          target: { type: 'policy', id },
          changes: { ...changes, version: { from: current.version, to: policy.version } },
        });
        return policy;
      }),
    );
  }

  async delete(
    id: string,
    expectedVersions: readonly number[] | undefined,
    op: OperationContext,
  ): Promise<DeletedPolicy> {
    return this.db.write('policies/delete', async (tx) => {
      const current = await this.lockLive(tx, id);
      assertVersion(expectedVersions, current);
      const deleted = await repo.delete(tx, id, bodyOf(current), op.actor.id, nowIso());
      this.events.record(tx, op, {
        type: 'policy.deleted',
        target: { type: 'policy', id },
        changes: {
          name: { from: current.name },
          status: { from: current.status, to: 'deleted' },
          version: { from: current.version, to: deleted.version },
        },
      });
      return { id, status: 'deleted', deleted_at: deleted.deleted_at!, deleted_by: deleted.deleted_by! };
    });
  }

  async versions(id: string, page: Page): Promise<Paged<PolicyVersionRow>> {
    const rows = await repo.versions(this.db, id, page);
    if (!rows) throw notFound('policy', id);
    return { total: rows.total, items: rows.versions, page };
  }

  /**
   * Records `policy.expired` for each active policy whose window has closed, once: the event
   * commits with the mark that says it was recorded, so several instances (or a run retried)
   * never record a close twice, and a replacement that gives the policy a new window clears the
   * mark. Decisions do not wait for this: they apply the window themselves. Answers how many
   * closes it recorded.
   */
  async recordExpirations(signal?: AbortSignal): Promise<number> {
    let recorded = 0;
    for (;;) {
      signal?.throwIfAborted();
      const now = nowIso();
      const marked = await this.db.write('policies/expire', async (tx) => {
        const closed = await repo.expire(tx, now, EXPIRY_BATCH);
        for (const policy of closed) {
          this.events.record(tx, SYSTEM_CONTEXT, {
            type: 'policy.expired',
            target: { type: 'policy', id: policy.id },
            reason: `its window closed at ${policy.valid_until}`,
          });
        }
        return closed.length;
      });
      recorded += marked;
      if (marked < EXPIRY_BATCH) return recorded;
    }
  }

  /**
   * Records `policy.window_opened` for each active policy whose window was yet to open when it
   * was written and has opened since, once (as `recordExpirations` records closes). Answers how
   * many openings it recorded.
   */
  async recordOpenings(signal?: AbortSignal): Promise<number> {
    let recorded = 0;
    for (;;) {
      signal?.throwIfAborted();
      const now = nowIso();
      const marked = await this.db.write('policies/open', async (tx) => {
        const opened = await repo.open(tx, now, EXPIRY_BATCH);
        for (const policy of opened) {
          this.events.record(tx, SYSTEM_CONTEXT, {
            type: 'policy.window_opened',
            target: { type: 'policy', id: policy.id },
            reason: `its window opened at ${policy.valid_from}`,
          });
        }
        return opened.length;
      });
      recorded += marked;
      if (marked < EXPIRY_BATCH) return recorded;
    }
  }

  /** The policy under its write lock, unless it is deleted. */
  private async lockLive(tx: Tx, id: string): Promise<Policy> {
    const policy = await repo.lock(tx, id);
    if (!policy) throw notFound('policy', id);
    if (policy.status === 'deleted') throw conflict(`policy ${id} is deleted`);
    return policy;
  }
}
