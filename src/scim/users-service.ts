import type { OperationContext } from '../audit/audit.js';
import type { ScimCaller } from '../connectors/model.js';
import type { Database, Tx } from '../db/database.js';
import { AppError } from '../errors/errors.js';
import { newId } from '../ids.js';
import { MANAGER_KEY, type Principal } from '../principals/model.js';
import { runSearch } from '../principals/search/service.js';
import type { PrincipalWriter } from '../principals/writes.js';
import type { SearchPlans } from '../principals/search/plans.js';
import { and, condition, field } from '../principals/search/model.js';
import { checkFilter } from './bounds.js';
import { ScimError, scimNotFound } from './errors.js';
import { evaluateFilter, parseFilter, ScimSyntaxError } from './filter.js';
import { compileUserFilter } from './query.js';
import { scimRepository as repo, type StoredUser } from './repository.js';
import type { ScimObject } from './resource.js';
import { ScimResourceWrites } from './writes.js';
import { caseExactOf, USER_RESOURCE } from './attributes.js';
import {
  createdChanges,
  etagOf,
  managerRefOf,
  mappedAttributes,
  mappedMetadata,
  mergePatch,
  readUser,
  updatedChanges,
  userFields,
  userView,
  withMapped,
  type UserFields,
} from './users.js';

/** Most users a filter the indexes cannot answer alone may have to look at. */
export const MAX_FILTER_CANDIDATES = 10_000;
export const MAX_RESULTS = 200;

export interface ListRequest {
  filter?: string | undefined;
  startIndex: number;
  count: number;
}

export interface ListResult {
  totalResults: number;
  startIndex: number;
  resources: ScimObject[];
}

const caseExact = caseExactOf('User');

function isConflict(err: unknown): boolean {
  return err instanceof AppError && err.code === 'CONFLICT';
}

/**
 * The Users of a connector's SCIM service provider: USER principals that the connector
 * provisions, mapped as docs/api.md §7 says, the client's own attributes kept whole beside them.
 */
export class ScimUserService extends ScimResourceWrites {
  constructor(
    private readonly db: Database,
    private readonly plans: SearchPlans,
    readonly baseUrl: string,
    /** Principals are written by their owner, which scores risk and records the events. */
    private readonly writer: PrincipalWriter,
  ) {
    super();
  }

  async create(caller: ScimCaller, body: unknown, op: OperationContext): Promise<ScimObject> {
    const scim = readUser(body);
    const fields = userFields(scim);
    const id = newId('principal');
    try {
      return await this.db.write('scim/users/create', async (tx) => {
        // A new user can close no cycle of managers: nobody reports to it yet.
        const prepared = await repo.prepareUser(tx, caller.id, {
          id,
          externalId: fields.externalId,
          managerRef: fields.managerRef,
        });
        const manager = {
          id: prepared?.managerId ?? null,
          waiting: fields.managerRef !== null && !prepared?.managerId,
        };
        const attributes = mappedAttributes(fields, manager.id);
        const metadata = mappedMetadata(fields);
        const status = fields.active ? 'active' : 'suspended';
        const principal = await this.writer.create(
          tx,
          {
            id,
            type: 'USER',
            name: fields.name,
            email: fields.email,
            attributes,
            metadata,
            status,
            connectorSource: caller.name,
            connectorId: fields.externalId,
            createdBy: caller.id,
            extra: {
              connector_ref: caller.id,
              user_name: fields.userName.toLowerCase(),
              scim: JSON.stringify(scim),
              ...(manager.waiting ? { manager_ref: fields.managerRef } : {}),
            },
          },
          { op, changes: createdChanges(caller.name, { ...fields, status }, { attributes, metadata }) },
        );
        await this.linkWaitingReports(tx, caller, principal, prepared?.waiting ?? [], op);
        return this.view({ principal, scim, managerId: manager.id });
      });
    } catch (err) {
      if (isConflict(err)) throw uniqueness(fields);
      throw err;
    }
  }

  async get(caller: ScimCaller, id: string): Promise<ScimObject> {
    const [found] = await repo.users(this.db, caller.id, [id]);
    if (!found) throw scimNotFound('User', id);
    return this.view(found);
  }

  async list(caller: ScimCaller, request: ListRequest): Promise<ListResult> {
    const filter = request.filter === undefined ? undefined : parseFilterOr400(request.filter);
    const compiled = filter ? compileUserFilter(filter) : { query: and(), exact: true };
    const query = and(
      condition(field('connector_ref'), '$eq', caller.id),
      condition(field('type'), '$in', ['USER']),
      condition(field('status'), '$in', ['active', 'suspended']),
      compiled.query,
    );
    const sort = { field: 'created_at' as const, order: 'asc' as const };
    const skip = request.startIndex - 1;
    const count = Math.min(request.count, MAX_RESULTS);
    if (compiled.exact) {
      const { total, items } = await runSearch(
        this.db,
        { query, sort, page: { skip, limit: Math.max(count, 1) } },
        this.plans,
      );
      const page =
        count === 0
          ? []
          : await repo.users(
              this.db,
              caller.id,
              items.map((p) => p.id),
            );
      return {
        totalResults: total,
        startIndex: request.startIndex,
        resources: page.map((s) => this.view(s)),
      };
    }
    const { total, items } = await runSearch(
      this.db,
      { query, sort, page: { skip: 0, limit: MAX_FILTER_CANDIDATES } },
      this.plans,
    );
    if (total > MAX_FILTER_CANDIDATES) {
      throw new ScimError(
        400,
        'tooMany',
        `the filter would have to look at ${total} users; narrow it with userName, externalId, id, active or meta dates`,
      );
    }
    const candidates = await repo.users(
      this.db,
      caller.id,
      items.map((p) => p.id),
    );
    const matches = candidates
      .map((s) => this.view(s))
      .filter((resource) => evaluateFilter(filter!, resource, { caseExact }));
    return {
      totalResults: matches.length,
      startIndex: request.startIndex,
      resources: matches.slice(skip, skip + count),
    };
  }

  protected readonly resource = USER_RESOURCE;

  protected read(body: unknown): ScimObject {
    return readUser(body);
  }

  /** Deprovisions the user: the principal stays for history; SCIM no longer sees it. */
  async delete(
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined,
    op: OperationContext,
  ): Promise<void> {
    await this.db.write('scim/users/delete', async (tx) => {
      const current = await this.lock(tx, caller, id, ifMatch);
      const p = current.principal;
      await this.writer.update(
        tx,
        p,
        { status: 'deprovisioned', extra: { user_name: null, manager_ref: null } },
        { op, changes: {} },
      );
    });
  }

  protected async write(
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined,
    op: OperationContext,
    next: (current: ScimObject) => ScimObject,
  ): Promise<ScimObject> {
    let fields: UserFields | undefined;
    try {
      return await this.db.write('scim/users/update', async (tx) => {
        const current = await this.lock(tx, caller, id, ifMatch);
        const scim = next(this.view(current));
        fields = userFields(scim);
        const p = current.principal;
        const managerChanged = fields.managerRef !== (managerRefOf(current.scim) ?? null);
        const manager = managerChanged
          ? await this.resolveManager(tx, caller, id, fields.managerRef)
          : { id: current.managerId, waiting: false };
        const { attributes, metadata } = withMapped(p, fields, manager.id);
        const status = fields.active ? 'active' : 'suspended';
        const changes = updatedChanges(current, { fields, scim, attributes, metadata });
        const statusChanged = status !== p.status;
        if (Object.keys(changes).length === 0 && !statusChanged) return this.view(current);
        const updated = await this.writer.update(
          tx,
          p,
          {
            name: fields.name,
            email: fields.email,
            status,
            attributes: mergePatch(p.attributes, attributes),
            metadata: mergePatch(p.metadata, metadata),
            ...(managerChanged ? { manager: { id: manager.id } } : {}),
            extra: {
              connector_id: fields.externalId,
              user_name: fields.userName.toLowerCase(),
              scim: JSON.stringify(scim),
              manager_ref: manager.waiting ? fields.managerRef : null,
            },
          },
          { op, changes },
        );
        return this.view({ principal: updated, scim, managerId: manager.id });
      });
    } catch (err) {
      if (isConflict(err) && fields) throw uniqueness(fields);
      throw err;
    }
  }

  private async lock(
    tx: Tx,
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined,
  ): Promise<StoredUser> {
    const stored = await repo.lockUser(tx, caller.id, id);
    if (!stored) throw scimNotFound('User', id);
    checkIfMatch(ifMatch, etagOf(stored.principal.version));
    return stored;
  }

  private view(stored: StoredUser): ScimObject {
    const p = stored.principal;
    return userView(
      stored.scim,
      {
        id: p.id,
        active: p.status === 'active',
        created: p.created_at,
        lastModified: p.updated_at,
        version: p.version,
        managerId: stored.managerId,
        groups: stored.groups ?? [],
      },
      this.baseUrl,
    );
  }

  /**
   * The manager a SCIM client names, among this connector's users. One that has not arrived yet
   * (or would close a cycle of managers) is waited for: the link is made when it arrives. An
   * externalId that several of the connector's users share names none of them: the user waits.
   */
  private async resolveManager(
    tx: Tx,
    caller: ScimCaller,
    id: string,
    ref: string | null,
  ): Promise<{ id: string | null; waiting: boolean }> {
    if (!ref) return { id: null, waiting: false };
    const managerId = await repo.findManager(tx, caller.id, ref);
    if (!managerId || managerId === id) return { id: null, waiting: true };
    const check = await this.writer.managerCheck(tx, id, managerId);
    if (check.cycle) return { id: null, waiting: true };
    return { id: managerId, waiting: false };
  }

  /** Reports that arrived before this user and name it as their manager get their link now. */
  private async linkWaitingReports(
    tx: Tx,
    caller: ScimCaller,
    manager: Principal,
    waiting: string[],
    op: OperationContext,
  ): Promise<void> {
    for (const id of waiting) {
      const [report] = await repo.users(tx, caller.id, [id]);
      if (!report) continue;
      const check = await this.writer.managerCheck(tx, id, manager.id);
      if (check.cycle) continue;
      await this.writer.update(
        tx,
        report.principal,
        {
          attributes: { [MANAGER_KEY]: manager.id },
          manager: { id: manager.id },
          extra: { manager_ref: null },
        },
        { op, changes: { [`attributes.${MANAGER_KEY}`]: { from: null, to: manager.id } } },
      );
    }
  }
}

/** Only a userName is unique within a connector (regardless of case); an externalId is not. */
function uniqueness(fields: UserFields): ScimError {
  return new ScimError(409, 'uniqueness', `a user with userName "${fields.userName}" already exists`);
}

/** `If-Match` (RFC 9110 §13.1.1, weak comparison): one of the tags, or `*`, must match. */
export function checkIfMatch(ifMatch: string | undefined, etag: string): void {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const opaque = (tag: string): string => tag.trim().replace(/^W\//i, '');
  if (!ifMatch.split(',').some((t) => opaque(t) === opaque(etag))) {
    throw new ScimError(412, undefined, `the resource has changed: it is at version ${etag}`);
  }
}

export function parseFilterOr400(text: string) {
  try {
    const filter = parseFilter(text);
    checkFilter(filter);
    return filter;
  } catch (err) {
    if (err instanceof ScimSyntaxError) throw new ScimError(400, 'invalidFilter', err.message);
    throw err;
  }
}
