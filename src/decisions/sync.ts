import { setImmediate } from 'node:timers/promises';
import type { Database } from '../db/database.js';
import type { ChangeEvent } from '../events/feed.js';
import { isId } from '../ids.js';
import type { Logger } from '../logging/logger.js';
import { resourceOf } from '../policies/model.js';
import type { PolicyIndex } from './policy-index.js';
import { compilePolicy, type IxPolicy, type IxPrincipal } from './model.js';
import { decisionRepository as repo } from './repository.js';

interface Pending {
  principals: Set<string>;
  groups: Set<string>;
  removedGroups: Set<string>;
  policies: Set<string>;
  resources: Set<string>;
  delegations: Set<string>;
}

/** What changed since the privilege factors of the risk were last brought up to date. */
export interface Dirty {
  /** Everything: the index was (re)built. */
  all: boolean;
  principals: Set<string>;
  /** Versions of policies that changed, before and after (active ones only). */
  policies: IxPolicy[];
}

/**
 * Principals read per statement, and put in the index between two turns of the event loop, when
 * a batch names many (a connector's sync names tens of thousands at once), instead of all in one.
 */
const PRINCIPAL_SLICE = 1_000;

async function principalsInSlices(db: Database, ids: string[]): Promise<IxPrincipal[]> {
  if (ids.length <= PRINCIPAL_SLICE) return repo.principalsById(db, ids);
  const out: IxPrincipal[] = [];
  for (let i = 0; i < ids.length; i += PRINCIPAL_SLICE) {
    out.push(...(await repo.principalsById(db, ids.slice(i, i + PRINCIPAL_SLICE))));
  }
  return out;
}

const nothing = (): Pending => ({
  principals: new Set(),
  groups: new Set(),
  removedGroups: new Set(),
  policies: new Set(),
  resources: new Set(),
  delegations: new Set(),
});

/**
 * Builds the decision index from Neo4j and keeps it current from the change feed. Each change
 * event names what changed; the index reads it again as it now is (so events may come twice or
 * out of order), in batches: changes that arrive while a batch is read wait for the next one,
 * which then reads them all together. The promise a listener call returns settles once its
 * change is in the index, so a write on this instance returns only after decisions see it.
 */
export class IndexSync {
  private pending = nothing();
  private queued: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();
  /** A batch failed to read: its keys wait for the next change or the periodic retry. */
  private failed = false;
  private dirty: Dirty = { all: true, principals: new Set(), policies: [] };

  constructor(
    private readonly db: Database,
    private readonly index: PolicyIndex,
    private readonly logger: Logger,
  ) {}

  /** Reads everything the index holds; call before serving, after the feed has opened. */
  async load(): Promise<{ principals: number; groups: number; policies: number; resources: number }> {
    const { index, db } = this;
    index.clear();
    this.dirty = { all: true, principals: new Set(), policies: [] };
    for (const g of await repo.groups(db)) index.putGroup(g.id, g.name, g.parents);
    for await (const page of repo.principals(db)) for (const p of page) index.putPrincipal(p.id, p);
    for (const policy of await repo.policies(db)) {
      try {
        index.putPolicy(compilePolicy(policy));
      } catch (err) {
        this.logger.error(
          { err, policy: policy.id },
          'a stored policy could not be compiled; it takes no effect',
        );
      }
    }
    const resources = await repo.resources(db);
    for (const r of resources) index.putResource(r.type, r.identifier, r);
    for (const d of await repo.delegations(db)) index.putDelegation(d.id, d);
    index.version += 1;
    return {
      principals: index.principals.size,
      groups: index.groups.size,
      policies: index.policies.size,
      resources: resources.length,
    };
  }

  /** What changed since the last call (everything, after a load). */
  takeDirty(): Dirty {
    const dirty = this.dirty;
    this.dirty = { all: false, principals: new Set(), policies: [] };
    return dirty;
  }

  /** Makes the next `takeDirty` say everything changed (a run that used the last one failed). */
  markAllDirty(): void {
    this.dirty.all = true;
  }

  /** The change listener: settles once the change is in the index. */
  readonly onChange = (event: ChangeEvent): Promise<void> => {
    if (!this.note(event)) return Promise.resolve();
    return this.schedule();
  };

  /** Retries a batch that failed to read (the periodic task calls this). */
  retry(): Promise<void> {
    if (!this.failed) return Promise.resolve();
    this.failed = false;
    return this.schedule();
  }

  private note(event: ChangeEvent): boolean {
    const p = this.pending;
    const id = event.target.id;
    switch (event.type.slice(0, event.type.indexOf('.'))) {
      case 'principal':
        p.principals.add(id);
        return true;
      case 'policy':
        p.policies.add(id);
        return true;
      case 'resource':
        p.resources.add(id);
        return true;
      case 'delegation':
        p.delegations.add(id);
        return true;
      case 'group': {
        if (event.type === 'group.deleted') {
          p.removedGroups.add(id);
          return true;
        }
        if (event.type === 'group.member_added' || event.type === 'group.member_removed') {
          const change = event.changes?.['members'];
          const member = (change?.to ?? change?.from) as string | undefined;
          if (typeof member !== 'string') return false;
          if (isId('group', member)) p.groups.add(member);
          else p.principals.add(member);
          return true;
        }
        p.groups.add(id);
        // A group created with its members names them all (a connector's bulk reconciliation).
        const members = event.changes?.['members']?.to;
        if (Array.isArray(members)) {
          for (const member of members) {
            if (typeof member !== 'string') continue;
            if (isId('group', member)) p.groups.add(member);
            else p.principals.add(member);
          }
        }
        return true;
      }
      default:
        return false;
    }
  }

  private schedule(): Promise<void> {
    if (this.queued) return this.queued;
    const run = this.tail.then(() => {
      this.queued = null;
      return this.apply();
    });
    this.queued = run;
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async apply(): Promise<void> {
    const work = this.pending;
    this.pending = nothing();
    const { index, db } = this;
    try {
      const [policies, groups, principals, resources, delegations] = await Promise.all([
        work.policies.size > 0 ? repo.policiesById(db, [...work.policies]) : [],
        work.groups.size > 0 ? repo.groupsById(db, [...work.groups]) : [],
        work.principals.size > 0 ? principalsInSlices(db, [...work.principals]) : [],
        work.resources.size > 0 ? repo.resourcesByKey(db, [...work.resources].map(resourceOf)) : [],
        work.delegations.size > 0 ? repo.delegationsById(db, [...work.delegations]) : [],
      ]);
      const dirty = this.dirty;
      const touched = (ids: Iterable<string>): void => {
        for (const id of ids) dirty.principals.add(id);
      };
      for (const id of work.removedGroups) touched(index.removeGroup(id));
      const foundGroups = new Set<string>();
      for (const g of groups) {
        foundGroups.add(g.id);
        if (index.putGroup(g.id, g.name, g.parents)) touched(index.membersOf(g.id));
      }
      for (const id of work.groups) if (!foundGroups.has(id)) touched(index.removeGroup(id));
      const foundPrincipals = new Set<string>();
      for (const [i, p] of principals.entries()) {
        // A batch of tens of thousands is put in slices, the event loop turning between them.
        if (i > 0 && i % PRINCIPAL_SLICE === 0) await setImmediate();
        foundPrincipals.add(p.id);
        index.putPrincipal(p.id, p);
      }
      for (const id of work.principals) if (!foundPrincipals.has(id)) index.putPrincipal(id, undefined);
      touched(work.principals);
      const foundPolicies = new Set<string>();
      const replacePolicy = (id: string, next: IxPolicy | undefined): void => {
        const old = index.policies.get(id);
        if (old?.active) dirty.policies.push(old);
        if (next) index.putPolicy(next);
        else index.removePolicy(id);
        if (next?.active) dirty.policies.push(next);
      };
      for (const policy of policies) {
        foundPolicies.add(policy.id);
        replacePolicy(policy.id, policy.status === 'deleted' ? undefined : compilePolicy(policy));
      }
      for (const id of work.policies) if (!foundPolicies.has(id)) replacePolicy(id, undefined);
      const foundResources = new Set<string>();
      for (const r of resources) {
        foundResources.add(`${r.type}:${r.identifier}`);
        index.putResource(r.type, r.identifier, r);
      }
      for (const key of work.resources) {
        if (!foundResources.has(key)) {
          const { type, identifier } = resourceOf(key);
          index.putResource(type, identifier, undefined);
        }
      }
      const foundDelegations = new Set<string>();
      for (const { delegation, active } of delegations) {
        foundDelegations.add(delegation.id);
        index.putDelegation(delegation.id, active ? delegation : undefined);
      }
      for (const id of work.delegations) if (!foundDelegations.has(id)) index.putDelegation(id, undefined);
      index.version += 1;
    } catch (err) {
      // Nothing is lost: the keys go back to wait for the next batch.
      for (const key of Object.keys(work) as (keyof Pending)[]) {
        for (const value of work[key]) this.pending[key].add(value);
      }
      this.failed = true;
      this.logger.warn({ err }, 'could not bring the decision index up to date; retrying');
      throw err;
    }
  }
}
