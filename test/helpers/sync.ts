import { expect } from 'chai';
import type { HttpClient } from './http.js';
import { eventually } from './wait.js';

export const NDJSON = { 'Content-Type': 'application/x-ndjson' };

/** A snapshot's lines: objects as JSON, strings as they are (for lines that are not JSON). */
export const snapshotLines = (items: readonly unknown[]): string =>
  items.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('\n');

/**
 * Submits a snapshot to `POST /v1/connectors/{id}/sync` (202, with its `Location`) and follows
 * the sync until it ends; answers it once completed (a failed sync fails the test).
 */
export async function syncSnapshot(api: HttpClient, connectorId: string, body: string): Promise<any> {
  const res = await api.post(`/v1/connectors/${connectorId}/sync`, undefined, { raw: body, headers: NDJSON });
  expect(res.status, res.text).to.equal(202);
  expect(res.headers.get('location')).to.equal(`/v1/connectors/${connectorId}/sync/${res.body.id}`);
  const { value } = await eventually(
    async () => (await api.get(res.headers.get('location')!)).body,
    (s) => s.status === 'completed' || s.status === 'failed',
    30_000,
    100,
  );
  expect(value.status, JSON.stringify(value)).to.equal('completed');
  return value;
}
