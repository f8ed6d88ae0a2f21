import type { Static } from '@sinclair/typebox';
import type { DeletedPrincipal } from '../schemas/principals.js';
import { diffMaps, type Changes, type OperationContext } from '../audit/audit.js';
import type { Database, Tx } from '../db/database.js';
import type { EventSink } from '../events/sink.js';
import { AppError, notFound, validationFailed } from '../errors/errors.js';
import { newId } from '../ids.js';
import { pageOf, type Paged } from '../pagination.js';
import { nowIso } from '../time.js';
import {
  CONNECTOR_ATTRIBUTES,
  CONNECTOR_METADATA,
  groupSummary,
  MANAGER_KEY,
  type Attributes,
  type AttributeValue,
  type Metadata,
  type Principal,
} from './model.js';
import { principalRepository as repo, type RelatedPrincipal } from './repository.js';
import { searchPrincipals, type SearchRequest } from './search/service.js';
import { applyPatch, type PrincipalWriter } from './writes.js';
import type { SearchPlans } from './search/plans.js';
import { MAX_KEYS, type PrincipalType } from '../vocabulary/principals.js';

export const RELATIONSHIP_TYPES = ['manager', 'reports', 'group_member'] as const;
export type RelationshipType = (typeof RELATIONSHIP_TYPES)[number];
/** Most principals listed per relationship entry; `count` keeps the true number. */
export const RELATIONSHIP_CAP = 1000;

/** A report with its direct manager: the next step towards the subject. */
type Report = RelatedPrincipal & { manager_id: string };
/** A group with the members through which it is reached at its shortest distance. */
type ReachedGroup = ReturnType<typeof groupSummary> & { via: string[] };
interface Level<T extends 'reports' | 'group_member', Item> {
  type: T;
  principals: Item[];
  depth: number;
  count: number;
  truncated?: true;
}
export type RelationshipEntry =
  | { type: 'manager'; principal: RelatedPrincipal; depth: number }
  | Level<'reports', Report>
  | Level<'group_member', ReachedGroup>;

export interface CreatePrincipalInput {
  type: PrincipalType;
  name: string;
  description?: string;
  attributes?: Attributes;
  metadata?: Metadata;
}

export interface PatchPrincipalInput {
  name?: string;
  description?: string | null;
  status?: 'active' | 'suspended';
  email?: string;
  attributes?: Record<string, AttributeValue | null>;
  metadata?: Record<string, string | null>;
}

/** Attributes an AI agent must give as arrays, per the contract. */
const AGENT_ARRAY_KEYS = ['capabilities', 'allowed_tools'];

const USER_OWNED_FIELDS = ['name', 'description', 'status', 'email'] as const;

function managedByConnector(message: string): AppError {
  return new AppError('PRINCIPAL_MANAGED_BY_CONNECTOR', message);
}

/**
 * A conditional write proceeds only from one of the versions the caller expects (undefined:
 * from any version).
 */
function assertVersion(
  expected: readonly number[] | undefined,
  current: { id: string; version: number },
): void {
  if (expected === undefined || expected.includes(current.version)) return;
  throw new AppError(
    'PRECONDITION_FAILED',
    `${current.id} has changed: it is at version ${current.version}, not the one expected`,
  );
}

function checkAgentArrays(
  type: PrincipalType,
  attributes: Record<string, unknown> | undefined,
  pointer: string,
): void {
  if (type !== 'AI_AGENT' || !attributes) return;
  const errors = AGENT_ARRAY_KEYS.filter((k) => typeof attributes[k] === 'string').map((k) => ({
    pointer: `${pointer}/${k}`,
    message: 'must be an array of strings for AI_AGENT principals',
  }));
  if (errors.length > 0) throw validationFailed('invalid attributes for an AI agent', errors);
}

/** Only the entries of a patch that change something, so no-op writes stay no-ops. */
function effective<T>(
  current: Record<string, T>,
  patch: Record<string, T | null> | undefined,
): Record<string, T | null> {
  const out: Record<string, T | null> = {};
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null ? key in current : JSON.stringify(current[key]) !== JSON.stringify(value))
      out[key] = value;
  }
  return out;
}

/** The principals of the identity graph: lifecycle, attributes, manager edges, risk. */
/** What deleting a principal answers. */
export type DeletedPrincipalView = Static<typeof DeletedPrincipal>;

export class PrincipalService {
  constructor(
    private readonly db: Database,
    private readonly events: EventSink,
    private readonly plans: SearchPlans,
    /** Writes principals, scoring their risk and recording the audit events. */
    private readonly writer: PrincipalWriter,
  ) {}

  async create(input: CreatePrincipalInput, op: OperationContext): Promise<Principal> {
    if (input.type === 'USER') {
      throw managedByConnector('USER principals are created by identity connectors, not through the API');
    }
    const attributes = input.attributes ?? {};
    const metadata = input.metadata ?? {};
    checkAgentArrays(input.type, attributes, '/attributes');
    const id = newId('principal');
    return this.db.write('principals/create', async (tx) => {
      // A retry after a lost commit answer returns what the first run committed.
      const committed = tx.attempt > 1 ? await repo.get(tx, id) : undefined;
      if (committed) return committed;
      const managerId = attributes[MANAGER_KEY];
      if (typeof managerId === 'string') await this.assertManager(tx, id, managerId);
      const principal = await this.writer.create(
        tx,
        {
          id,
          type: input.type,
          name: input.name,
          description: input.description ?? null,
          attributes,
          metadata,
          status: 'active',
          createdBy: op.actor.id,
        },
        {
          op,
          changes: {
            type: { to: input.type },
            name: { to: input.name },
            status: { to: 'active' },
            ...(input.description !== undefined ? { description: { to: input.description } } : {}),
            ...diffMaps(null, attributes, 'attributes'),
            ...diffMaps(null, metadata, 'metadata'),
          },
        },
      );
      return principal;
    });
  }

  /**
   * A page of principals matching a search (POST /principals/search, and GET /principals with
   * its filters), with the true total and the page and limit it used.
   */
  async search(request: SearchRequest): Promise<Paged<Principal>> {
    const { total, items } = await searchPrincipals(this.db, request, this.plans);
    return { total, items, page: pageOf(request) };
  }

  /**
   * Runs one search, so that Neo4j plans the search statement (every search shares it) before a
   * caller asks: planning it takes seconds, and happens once per database start.
   */
  async prepareSearch(): Promise<void> {
    await this.search({ limit: 1 });
  }

  async get(id: string): Promise<Principal> {
    const principal = await repo.get(this.db, id);
    if (!principal) throw notFound('principal', id);
    return principal;
  }

  async update(
    id: string,
    patch: PatchPrincipalInput,
    expectedVersions: readonly number[] | undefined,
    op: OperationContext,
  ): Promise<Principal> {
    return this.db.write('principals/update', async (tx) => {
      const current = await repo.lock(tx, id);
      if (!current) throw notFound('principal', id);
      if (current.status === 'deleted') throw new AppError('PRINCIPAL_DELETED', `principal ${id} is deleted`);
      assertVersion(expectedVersions, current);
      if (current.type === 'USER') {
        const owned: string[] = USER_OWNED_FIELDS.filter((f) => patch[f] !== undefined);
        if (current.connector_source) {
          owned.push(
            ...CONNECTOR_ATTRIBUTES.filter((k) => patch.attributes?.[k] !== undefined).map(
              (k) => `attributes.${k}`,
            ),
            ...CONNECTOR_METADATA.filter((k) => patch.metadata?.[k] !== undefined).map(
              (k) => `metadata.${k}`,
            ),
          );
        }
        if (owned.length > 0) {
          throw managedByConnector(
            `${owned.join(', ')} of USER principals come from their identity connector; only other attributes and metadata may change`,
          );
        }
      } else if (patch.email !== undefined) {
        throw validationFailed('email belongs to USER principals only', [
          { pointer: '/email', message: 'is only accepted for USER principals' },
        ]);
      }
      checkAgentArrays(current.type, patch.attributes, '/attributes');

      const attributeChanges = effective(current.attributes, patch.attributes);
      const metadataChanges = effective(current.metadata, patch.metadata);
      const attributes = applyPatch(current.attributes, attributeChanges);
      const metadata = applyPatch(current.metadata, metadataChanges);
      if (Object.keys(attributes).length > MAX_KEYS) {
        throw validationFailed('too many attributes', [
          { pointer: '/attributes', message: `would hold more than ${MAX_KEYS} keys` },
        ]);
      }
      if (Object.keys(metadata).length > MAX_KEYS) {
        throw validationFailed('too many metadata keys', [
          { pointer: '/metadata', message: `would hold more than ${MAX_KEYS} keys` },
        ]);
      }
      let manager: { id: string | null } | undefined;
      if (MANAGER_KEY in attributeChanges) {
        const next = attributeChanges[MANAGER_KEY];
        if (typeof next === 'string') await this.assertManager(tx, id, next);
        manager = { id: typeof next === 'string' ? next : null };
      }

      const fields: Changes = {};
      if (patch.name !== undefined && patch.name !== current.name)
        fields['name'] = { from: current.name, to: patch.name };
      if (patch.description !== undefined && patch.description !== current.description) {
        fields['description'] = { from: current.description, to: patch.description };
      }
      const statusChanged = patch.status !== undefined && patch.status !== current.status;
      const changes: Changes = {
        ...fields,
        ...diffMaps(current.attributes, attributes, 'attributes'),
        ...diffMaps(current.metadata, metadata, 'metadata'),
      };
      if (Object.keys(changes).length === 0 && !statusChanged) return current;

      const status = patch.status ?? current.status;
      const updated = await this.writer.update(
        tx,
        current,
        {
          ...(fields['name'] ? { name: patch.name } : {}),
          ...(fields['description'] ? { description: patch.description } : {}),
          ...(statusChanged ? { status } : {}),
          attributes: attributeChanges,
          metadata: metadataChanges,
          ...(manager ? { manager } : {}),
        },
        { op, changes },
      );
      return updated;
    });
  }

  async delete(
    id: string,
    expectedVersions: readonly number[] | undefined,
    op: OperationContext,
  ): Promise<DeletedPrincipalView> {
    return this.db.write('principals/delete', async (tx) => {
      const current = await repo.lock(tx, id);
      if (!current) throw notFound('principal', id);
      if (current.type === 'USER') {
        throw managedByConnector(
          'USER principals are removed by their identity connector, not through the API',
        );
      }
      if (current.status === 'deleted')
        throw new AppError('PRINCIPAL_DELETED', `principal ${id} is already deleted`);
      assertVersion(expectedVersions, current);
      const { principal, groups } = await repo.delete(tx, id, op.actor.id, nowIso());
      this.events.record(tx, op, {
        type: 'principal.deleted',
        target: { type: 'principal', id },
        changes: {
          status: { from: current.status, to: 'deleted' },
          ...(groups.length > 0 ? { groups: { from: groups.sort(), to: [] } } : {}),
        },
      });
      const { deleted_at, deleted_by } = principal;
      if (deleted_at === null || deleted_by === null)
        throw new Error(`principal ${id} was not marked deleted`);
      return { id: principal.id, status: 'deleted', deleted_at, deleted_by };
    });
  }

  /**
   * The identity graph around a principal: managers by depth, then reports by depth, then
   * groups by depth; levels with nobody are left out.
   */
  async relationships(
    id: string,
    types: readonly RelationshipType[],
    depth: number,
  ): Promise<{ principal_id: string; relationships: RelationshipEntry[] }> {
    const rows = await repo.relationships(this.db, id, types, depth, RELATIONSHIP_CAP);
    if (!rows) throw notFound('principal', id);
    const entries: RelationshipEntry[] = [];
    for (const m of rows.managers) entries.push({ type: 'manager', principal: m.principal, depth: m.depth });
    const level = <T extends 'reports' | 'group_member', Item>(
      type: T,
      depthOf: number,
      count: number,
      items: Item[],
    ): Level<T, Item> => ({
      type,
      principals: items,
      depth: depthOf,
      count,
      ...(count > items.length ? { truncated: true as const } : {}),
    });
    for (const r of [...rows.reports].sort((a, b) => a.depth - b.depth)) {
      entries.push(level('reports', r.depth, r.count, r.principals));
    }
    for (const g of [...rows.groups].sort((a, b) => a.depth - b.depth)) {
      const groups = g.groups.map((x) => ({ ...groupSummary(x), via: x.via }));
      entries.push(level('group_member', g.depth, g.count, groups));
    }
    return { principal_id: id, relationships: entries };
  }

  /** A manager must exist, not be deleted, and not make the chain of managers a cycle. */
  private async assertManager(tx: Tx, id: string, managerId: string): Promise<void> {
    const check = await this.writer.managerCheck(tx, id, managerId);
    const pointer = '/attributes/manager_id';
    if (!check.exists || check.status === 'deleted') {
      throw new AppError('REFERENCE_NOT_FOUND', `manager ${managerId} does not exist`, {
        errors: [{ pointer, message: 'names no existing principal' }],
      });
    }
    if (check.cycle) {
      throw new AppError('CYCLE_DETECTED', `${managerId} reports to ${id}, directly or indirectly`, {
        errors: [{ pointer, message: 'would make the chain of managers a cycle' }],
      });
    }
  }
}
