import { expect } from 'chai';
import type { HttpClient } from './http.js';
import { eventually } from './wait.js';

/**
 * Names unique to one test, so that tests sharing an app never clash; `type()` is a resource
 * type of one test alone, so that policies of other tests never apply to its requests.
 */
export function namer(): { uniq: (prefix: string) => string; type: () => string } {
  let seq = 0;
  const uniq = (prefix: string): string =>
    `${prefix}-${(seq += 1)}-${Math.random().toString(36).slice(2, 8)}`;
  return { uniq, type: () => uniq('t').replace(/[^a-z0-9-]/g, '') };
}

/** Writes through the API that the engine tests build their worlds with; each expects success. */
export function engineApi(api: HttpClient, uniq: (prefix: string) => string) {
  return {
    async principal(
      type = 'SERVICE_ACCOUNT',
      attributes: Record<string, unknown> = {},
      extra: Record<string, unknown> = {},
    ): Promise<any> {
      const res = await api.post('/v1/principals', { type, name: uniq('p'), attributes, ...extra });
      expect(res.status, res.text).to.equal(201);
      return res.body;
    },
    async group(): Promise<string> {
      const res = await api.post('/v1/groups', { name: uniq('g') });
      expect(res.status, res.text).to.equal(201);
      return res.body.id as string;
    },
    async addMember(groupId: string, memberId: string): Promise<void> {
      const res = await api.put(`/v1/groups/${groupId}/members/${memberId}`);
      expect(res.status, res.text).to.equal(200);
    },
    /** A policy allowing `read` unless the fields say otherwise. */
    async policy(fields: Record<string, unknown>): Promise<any> {
      const res = await api.post('/v1/policies', {
        name: uniq('policy'),
        effect: 'allow',
        actions: ['read'],
        ...fields,
      });
      expect(res.status, res.text).to.equal(201);
      return res.body;
    },
    /** A delegation from one principal to another, by default of everything for an hour. */
    async delegation(
      delegatorId: string,
      delegateId: string,
      fields: Record<string, unknown> = {},
    ): Promise<any> {
      const res = await api.post('/v1/delegations', {
        delegator_id: delegatorId,
        delegate_id: delegateId,
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        ...fields,
      });
      expect(res.status, res.text).to.equal(201);
      return res.body;
    },
    async register(
      type: string,
      identifier: string,
      attributes: Record<string, unknown> = {},
    ): Promise<void> {
      const res = await api.put(`/v1/resources/${type}/${encodeURIComponent(identifier)}`, { attributes });
      expect(res.status, res.text).to.be.within(200, 201);
    },
  };
}

/** A decision as recorded (`GET /v1/decisions/{id}`), once it has been written (within seconds). */
export async function recordedDecision(api: HttpClient, id: string): Promise<any> {
  const { value } = await eventually(
    () => api.get(`/v1/decisions/${id}`),
    (res) => res.status === 200,
    3_000,
  );
  return value.body;
}
