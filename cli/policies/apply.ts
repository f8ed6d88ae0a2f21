import { ulid } from 'ulid';
import { policyNameKey } from '../../src/policies/model.js';
import { statusOf, wireBody, type PolicyApi } from './api.js';
import type { Plan, PlannedChange } from './plan.js';

/**
 * Applying a plan (./plan.ts) to the service, only as it was planned: each replacement and
 * deletion sends `If-Match` with the version the plan read, and a creation goes ahead only while
 * no policy holds its name. Before the first write every policy of the plan is read again, so
 * that a plan the live policies have moved away from is refused whole; a change that lands
 * between that check and its own write is refused by the service (`412`, or `409` for a name
 * taken meanwhile), and nothing after it is applied.
 *
 * Who applied the plan is what the service records of every write: the API client, in the
 * policy's `created_by`/`updated_by`/`deleted_by` and as the actor of its audit event. The writes
 * of one run also share a request id (`policies-apply.<run>.<n>`), which each audit event keeps
 * as `request_id`, so that the events of one apply can be found together.
 */

/** One change made. */
export interface Applied {
  action: PlannedChange['action'];
  name: string;
  policy_id: string;
  /** The version the policy is at now (for a deletion, the version deleted). */
  version: number;
  /** The API client the service recorded as having made it. */
  by: string;
  request_id: string;
}

export interface ApplyResult {
  /** The run, as the request ids of its writes name it. */
  run: string;
  applied: Applied[];
  /**
   * Set when the run stopped before its end: `stale` when the live policies changed since the plan
   * (nothing further was applied), `failed` when the service refused a change for another reason.
   */
  stopped?: { reason: 'stale' | 'failed'; name: string; message: string };
}

/** Applies the changes of `plan` in its order (creations and updates by name, then deletions). */
export async function applyPlan(plan: Plan, api: PolicyApi, run = newRunId()): Promise<ApplyResult> {
  const result: ApplyResult = { run, applied: [] };
  const moved = await movedSincePlan(plan, api);
  if (moved) {
    result.stopped = { reason: 'stale', ...moved };
    return result;
  }
  for (const [i, change] of plan.changes.entries()) {
    const tag = { requestId: `policies-apply.${run}.${i + 1}` };
    try {
      if (change.action === 'create') {
        const p = await api.create(wireBody(change.body), tag);
        result.applied.push(applied(change, p.id, p.version, p.created_by, tag.requestId));
      } else if (change.action === 'update') {
        const p = await api.replace(change.live.id, change.live.version, wireBody(change.body), tag);
        result.applied.push(applied(change, p.id, p.version, p.updated_by, tag.requestId));
      } else {
        const d = await api.remove(change.live.id, change.live.version, tag);
        result.applied.push(
          applied(change, change.live.id, change.live.version, d.deleted_by, tag.requestId),
        );
      }
    } catch (err) {
      const status = statusOf(err);
      // 412: the policy is no longer at the version planned; 409: a policy took the name, or the
      // one to delete is deleted already. Either way the plan no longer describes the service.
      const stale = status === 412 || status === 409;
      result.stopped = {
        reason: stale ? 'stale' : 'failed',
        name: change.name,
        message: stale
          ? `${change.name} changed on the service since the plan (${status}): ${(err as Error).message}`
          : `${change.name}: the service refused the ${change.action}: ${(err as Error).message}`,
      };
      return result;
    }
  }
  return result;
}

const applied = (
  change: PlannedChange,
  id: string,
  version: number,
  by: string,
  requestId: string,
): Applied => ({
  action: change.action,
  name: change.name,
  policy_id: id,
  version,
  by,
  request_id: requestId,
});

/** A run id: sortable by time, and legal in a request id. */
export const newRunId = (): string => ulid();

/**
 * The first policy of the plan that is no longer as the plan found it: one to replace or delete
 * at another version (or gone), or one to create whose name is now taken.
 */
async function movedSincePlan(
  plan: Plan,
  api: PolicyApi,
): Promise<{ name: string; message: string } | undefined> {
  if (plan.changes.length === 0) return undefined;
  const live = await api.list();
  const byId = new Map(live.map((p) => [p.id, p]));
  const byKey = new Map(live.map((p) => [policyNameKey(p.name), p]));
  for (const change of plan.changes) {
    if (change.action === 'create') {
      const taken = byKey.get(policyNameKey(change.name));
      if (taken) {
        return {
          name: change.name,
          message: `${change.name} was created on the service (${taken.id}) since the plan`,
        };
      }
      continue;
    }
    const now = byId.get(change.live.id);
    if (!now)
      return { name: change.name, message: `${change.name} (${change.live.id}) was deleted since the plan` };
    if (now.version !== change.live.version) {
      return {
        name: change.name,
        message: `${change.name} (${change.live.id}) is at version ${now.version} now, not ${change.live.version} as planned (changed by ${now.updated_by} at ${now.updated_at})`,
      };
    }
  }
  return undefined;
}

/** What a run did, as text. */
export function applyText(result: ApplyResult, total: number): string {
  const lines = result.applied.map(
    (a) =>
      `${a.action === 'create' ? 'created' : a.action === 'update' ? 'updated' : 'deleted'} ${a.name} (${a.policy_id}, version ${a.version})`,
  );
  if (result.stopped) {
    lines.push(
      result.stopped.reason === 'stale'
        ? `refused: ${result.stopped.message}`
        : `stopped: ${result.stopped.message}`,
    );
    const left = total - result.applied.length;
    lines.push(
      `${result.applied.length} of ${total} change${total === 1 ? '' : 's'} applied; ${left} not applied.${result.stopped.reason === 'stale' ? ' Make a new plan and apply it again.' : ''}`,
    );
  } else {
    const by = [...new Set(result.applied.map((a) => a.by))].join(', ');
    lines.push(
      `${result.applied.length} change${result.applied.length === 1 ? '' : 's'} applied by ${by}; audit events: request ids policies-apply.${result.run}.*`,
    );
  }
  // Set apart from the plan printed before it.
  return `\n${lines.join('\n')}\n`;
}
