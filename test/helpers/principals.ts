import { newId } from '../../src/ids.js';
import type { Attributes, Metadata, Principal } from '../../src/principals/model.js';
import { principalRepository } from '../../src/principals/repository.js';
import { assessRisk } from '../../src/risk/score.js';
import { nowIso } from '../../src/time.js';
import type { TestApp } from './app.js';
import { type PrincipalStatus, type PrincipalType } from '../../src/vocabulary/principals.js';

export interface InsertPrincipal {
  /** An id of its own (default: a new one). */
  id?: string;
  type?: PrincipalType;
  name: string;
  email?: string;
  description?: string;
  attributes?: Attributes;
  metadata?: Metadata;
  status?: PrincipalStatus;
  connectorSource?: string;
  connectorId?: string;
  lastLogin?: string;
}

/**
 * Writes a principal straight through the repository, as an identity connector will: the only
 * way tests get USER principals (the API refuses to create them) and a quick way to seed data.
 * Manager ids must name principals that exist.
 */
export async function insertPrincipal(app: TestApp, input: InsertPrincipal): Promise<Principal> {
  const type = input.type ?? 'USER';
  const attributes = input.attributes ?? {};
  const metadata = input.metadata ?? {};
  const status = input.status ?? 'active';
  const lastLogin = input.lastLogin ?? null;
  const risk = assessRisk({ type, status, attributes, metadata, last_login: lastLogin });
  return app.runtime.db.write('test/insert_principal', async (tx) => {
    const principal = await principalRepository.create(
      tx,
      {
        id: input.id ?? newId('principal'),
        type,
        name: input.name,
        description: input.description ?? null,
        email:
          input.email ??
          (type === 'USER' ? `${input.name.toLowerCase().replace(/\W+/g, '.')}@example.com` : null),
        attributes,
        metadata,
        status,
        connectorSource: input.connectorSource ?? (type === 'USER' ? 'okta' : null),
        connectorId:
          input.connectorId ?? (type === 'USER' ? `00u${Math.random().toString(36).slice(2, 12)}` : null),
        lastLogin,
        createdBy: 'con_test',
        risk,
      },
      nowIso(),
    );
    // Recorded as a connector's change is, so that whatever follows changes (the decision
    // index) learns of it.
    app.runtime.events.record(
      tx,
      {
        actor: { type: 'connector', id: 'con_test' },
        meta: { requestId: null, sourceIp: null, userAgent: null },
      },
      { type: 'principal.created', target: { type: 'principal', id: principal.id } },
    );
    return principal;
  });
}
