import type { OperationContext } from '../audit/audit.js';
import { SYSTEM_CONTEXT } from '../audit/audit.js';
import type { Transactions } from '../db/database.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import { AppError, conflict, notFound, type FieldError } from '../errors/errors.js';
import type { EventRecorder } from '../events/sink.js';
import { newId } from '../ids.js';
import type { Page, Paged } from '../pagination.js';
import { resourceKey } from '../policies/model.js';
import { globProblem, isGlob } from '../policies/patterns.js';
import {
  MAX_CHAIN,
  type CreateDelegation,
  type Delegation,
  type DelegationStatus,
  type PrincipalDelegations,
} from '../schemas/delegations.js';
import { nowIso } from '../time.js';
import { delegationRepository, type Party } from './repository.js';

/** The principal types that may act for another. */
export const DELEGATE_TYPES: readonly string[] = ['AI_AGENT', 'SERVICE_ACCOUNT'];

/** Expired delegations marked per transaction by the expiry sweep. */
const EXPIRY_BATCH = 500;

const DAY_MS = 24 * 60 * 60 * 1000;

const targetOf = (id: string) => ({ type: 'delegation', id });

const referenceNotFound = (pointer: string, id: string): AppError =>
  new AppError('REFERENCE_NOT_FOUND', `principal ${id} does not exist`, {
    errors: [{ pointer, message: 'names no existing principal' }],
  });

const notAllowed = (pointer: string, message: string): AppError =>
  new AppError('DELEGATION_NOT_ALLOWED', message, { errors: [{ pointer, message }] });

/**
 * Who may act for whom (docs/api.md §10): delegations from any active principal to an AI agent
 * or a service account, narrowed by actions and resources, until they expire. Each is an edge
 * `(delegator)-[:DELEGATES_TO]->(delegate)` in the graph; the decision index follows them
 * through the change feed like memberships.
 */
export class DelegationService {
  constructor(
    private readonly db: Transactions,
    private readonly events: EventRecorder,
    private readonly index: PolicyIndex,
    private readonly settings: { maxDays: number },
    private readonly repo = delegationRepository,
  ) {}

  async create(body: CreateDelegation, op: OperationContext): Promise<Delegation> {
    const now = Date.now();
    const expiresAt = Date.parse(body.expires_at);
    const errors: FieldError[] = [];
    if (!(expiresAt > now)) errors.push({ pointer: '/expires_at', message: 'must be in the future' });
    else if (expiresAt > now + this.settings.maxDays * DAY_MS) {
      errors.push({
        pointer: '/expires_at',
        message: `must be at most ${this.settings.maxDays} days ahead`,
      });
    }
    body.resources?.forEach((r, i) => {
      const problem = isGlob(r.identifier) ? globProblem(r.identifier) : undefined;
      if (problem) errors.push({ pointer: `/resources/${i}/identifier`, message: problem });
    });
    if (errors.length > 0) throw new AppError('VALIDATION_FAILED', 'the delegation is not valid', { errors });
    if (body.delegator_id === body.delegate_id) {
      throw new AppError('CYCLE_DETECTED', 'a principal cannot delegate to itself', {
        errors: [{ pointer: '/delegate_id', message: 'is the delegator' }],
      });
    }
    return this.db.write('delegations/create', async (tx) => {
      const { delegator, delegate } = await this.repo.lock(tx, body.delegator_id, body.delegate_id);
      const live = (p: Party | undefined): p is Party => p !== undefined && p.status !== 'deleted';
      if (!live(delegator)) throw referenceNotFound('/delegator_id', body.delegator_id);
      if (!live(delegate)) throw referenceNotFound('/delegate_id', body.delegate_id);
      if (delegator.status !== 'active') {
        throw notAllowed(
          '/delegator_id',
          `the delegator is ${delegator.status}: only an active principal delegates`,
        );
      }
      if (!DELEGATE_TYPES.includes(delegate.type)) {
        throw notAllowed(
          '/delegate_id',
          `a ${delegate.type} cannot act for another principal: the delegate is an AI_AGENT or a SERVICE_ACCOUNT`,
        );
      }
      if (delegate.status !== 'active') {
        throw notAllowed('/delegate_id', `the delegate is ${delegate.status}`);
      }
      const at = nowIso();
      if (await this.repo.closesCycle(tx, body.delegator_id, body.delegate_id, at)) {
        throw new AppError(
          'CYCLE_DETECTED',
          `${body.delegate_id} already acts for ${body.delegator_id}: this delegation would close a cycle`,
          { errors: [{ pointer: '/delegate_id', message: 'already acts, down a chain, for the delegator' }] },
        );
      }
      const id = newId('delegation');
      const actions = body.actions ?? ['*'];
      const resources = body.resources
        ? [...new Set(body.resources.map((r) => resourceKey(r.type, r.identifier)))]
        : null;
      const delegation = await this.repo.create(
        tx,
        body.delegator_id,
        body.delegate_id,
        new Date(expiresAt).toISOString(),
        { id, actions, resources, reason: body.reason ?? null, created_by: op.actor.id },
        at,
      );
      this.events.record(tx, op, {
        type: 'delegation.created',
        target: targetOf(id),
        changes: {
          delegator_id: { to: body.delegator_id },
          delegate_id: { to: body.delegate_id },
          actions: { to: actions },
          resources: { to: resources },
          expires_at: { to: delegation.expires_at },
        },
      });
      return delegation;
    });
  }

  async get(id: string): Promise<Delegation> {
    const found = await this.repo.get(this.db, id);
    if (!found) throw notFound('delegation', id);
    return found;
  }

  async list(
    filter: {
      delegatorId?: string | undefined;
      delegateId?: string | undefined;
      status?: DelegationStatus | undefined;
    },
    page: Page,
  ): Promise<Paged<Delegation>> {
    const { total, delegations } = await this.repo.list(
      this.db,
      {
        delegatorId: filter.delegatorId ?? null,
        delegateId: filter.delegateId ?? null,
        status: filter.status ?? null,
      },
      page,
    );
    return { total, items: delegations, page };
  }

  /**
   * Revokes a delegation; it stops applying as soon as the answer returns. Revoking one already
   * revoked answers it as it is; an expired one cannot be revoked (409).
   */
  async revoke(id: string, op: OperationContext): Promise<Delegation> {
    return this.db.write('delegations/revoke', async (tx) => {
      const revoked = await this.repo.revoke(tx, id, op.actor.id, nowIso());
      if (!revoked) {
        const current = await this.repo.get(tx, id);
        if (!current) throw notFound('delegation', id);
        if (current.status === 'revoked') return current;
        throw conflict(`delegation ${id} has expired`);
      }
      this.events.record(tx, op, {
        type: 'delegation.revoked',
        target: targetOf(id),
        changes: { status: { from: 'active', to: 'revoked' } },
      });
      return revoked;
    });
  }

  /**
   * Records the expiry of every active delegation past its `expires_at` (the periodic sweep):
   * marked `expired` with a `delegation.expired` event in the same transaction, in batches.
   * Decisions stop honouring a delegation at `expires_at` itself, whenever the sweep runs.
   */
  async expire(signal?: AbortSignal): Promise<number> {
    let total = 0;
    for (;;) {
      signal?.throwIfAborted();
      const done = await this.db.write('delegations/expire', async (tx) => {
        const expired = await this.repo.expireDue(tx, nowIso(), EXPIRY_BATCH);
        for (const d of expired) {
          this.events.record(tx, SYSTEM_CONTEXT, {
            type: 'delegation.expired',
            target: targetOf(d.id),
            changes: { status: { from: 'active', to: 'expired' }, expires_at: { to: d.expires_at } },
          });
        }
        return expired.length;
      });
      total += done;
      if (done < EXPIRY_BATCH) return total;
    }
  }

  /**
   * A principal's delegations: those it gives, then the active ones further down the chains
   * that start at it, and those it receives; each active one with its chain.
   */
  async ofPrincipal(id: string): Promise<PrincipalDelegations> {
    const own = await this.repo.ofPrincipal(this.db, id);
    if (!own) throw notFound('principal', id);
    const known = new Set([...own.given, ...own.received].map((d) => d.id));
    const further: string[] = [];
    // Down the chains that start here, as the decision index holds them (active delegations).
    let frontier = [...this.index.delegationsGiven(id)].map((d) => d.delegateId);
    const seen = new Set([id]);
    for (let depth = 1; depth < MAX_CHAIN && frontier.length > 0; depth += 1) {
      const next: string[] = [];
      for (const p of frontier) {
        if (seen.has(p)) continue;
        seen.add(p);
        for (const d of this.index.delegationsGiven(p)) {
          if (!known.has(d.id)) {
            known.add(d.id);
            further.push(d.id);
          }
          next.push(d.delegateId);
        }
      }
      frontier = next;
    }
    const below = further.length > 0 ? await this.repo.byIds(this.db, further) : [];
    const withChain = (d: Delegation): Delegation =>
      d.status === 'active' ? { ...d, chain: [...this.upstream(d.delegator_id), d.delegate_id] } : d;
    return {
      principal_id: id,
      given: [...own.given, ...below].map(withChain),
      received: own.received.map(withChain),
    };
  }

  /**
   * The chain of active delegations that ends at a principal, outermost delegator first: the
   * longest such chain (at most four principals before the delegate), ties going to the
   * delegator whose id sorts first.
   */
  private upstream(id: string): string[] {
    const walk = (p: string, visited: Set<string>): string[] => {
      if (visited.size >= MAX_CHAIN) return [p];
      let best: string[] = [];
      const delegators = [
        ...new Set([...this.index.delegationsReceived(p)].map((d) => d.delegatorId)),
      ].sort();
      for (const delegator of delegators) {
        if (visited.has(delegator)) continue;
        const path = walk(delegator, new Set([...visited, delegator]));
        if (path.length > best.length) best = path;
      }
      return [...best, p];
    };
    return walk(id, new Set([id]));
  }
}
