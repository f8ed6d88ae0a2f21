/**
 * The provisioning client of bench/scim.ts, in a process of its own so that it never shares an
 * event loop with the service it measures: `clients` concurrent workers create the users with
 * `POST /Users`, one request each at a time, as an identity provider's provisioning service does.
 * A user's manager is named by its SCIM id once the manager's creation has been answered (as
 * Entra does), else by its externalId (which the service also accepts). It takes one run at a
 * time over IPC and answers with the figures.
 */
import { ENTERPRISE_SCHEMA } from '../src/scim/schema.js';

export interface ProvisionRun {
  /** The SCIM base URL, e.g. http://127.0.0.1:8080/scim/v2. */
  scimBase: string;
  token: string;
  clients: number;
  /** In the order they are sent; `manager` is the position of an earlier user, or null. */
  users: { body: Record<string, unknown>; externalId: string; manager: number | null }[];
}

export interface ProvisionResult {
  /** From the first request sent to the last answer received. */
  seconds: number;
  created: number;
  /** Each request's latency in ms, from sending until the answer was read. */
  latencies: number[];
  statuses: Record<string, number>;
  /** The first few answers that were not 201. */
  errors: string[];
  /** How the managers were named: by SCIM id, or by externalId (not answered yet). */
  managers: { by_id: number; by_external_id: number };
}

async function provision(spec: ProvisionRun): Promise<ProvisionResult> {
  const ids: (string | undefined)[] = new Array<string | undefined>(spec.users.length);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const errors: string[] = [];
  const managers = { by_id: 0, by_external_id: 0 };
  let next = 0;
  let created = 0;
  const headers = {
    authorization: `Bearer ${spec.token}`,
    'content-type': 'application/scim+json',
    accept: 'application/scim+json',
  };
  const worker = async (): Promise<void> => {
    while (next < spec.users.length) {
      const at = next;
      next += 1;
      const user = spec.users[at]!;
      let body = user.body;
      if (user.manager !== null) {
        const managerId = ids[user.manager];
        if (managerId) managers.by_id += 1;
        else managers.by_external_id += 1;
        const enterprise = body[ENTERPRISE_SCHEMA] as Record<string, unknown>;
        body = {
          ...body,
          [ENTERPRISE_SCHEMA]: {
            ...enterprise,
            manager: { value: managerId ?? spec.users[user.manager]!.externalId },
          },
        };
      }
      const payload = JSON.stringify(body);
      const t0 = process.hrtime.bigint();
      const res = await fetch(`${spec.scimBase}/Users`, { method: 'POST', headers, body: payload });
      const text = await res.text();
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 201) {
        ids[at] = (JSON.parse(text) as { id: string }).id;
        created += 1;
      } else if (errors.length < 5) {
        errors.push(`${res.status}: ${text.slice(0, 300)}`);
      }
    }
  };
  const began = process.hrtime.bigint();
  await Promise.all(Array.from({ length: spec.clients }, worker));
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  return { seconds, created, latencies, statuses, errors, managers };
}

process.on('message', (spec: ProvisionRun) => {
  provision(spec).then(
    (result) => process.send!({ ok: true, result }),
    (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
