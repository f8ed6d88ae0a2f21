import { PasApiError, unwrap, type PasClient, type Schema } from '../../clients/typescript/src/index.js';
import type { PolicyBody } from '../../src/policies/model.js';

/**
 * What the policy commands ask of the service, as a narrow interface: the commands take it as a
 * parameter, so that their logic is tested against the real service or a stand-in alike.
 */

export type LivePolicyRecord = Schema<'Policy'>;
export type PolicyBodyInput = Schema<'PolicyBody'>;
export type SimulationInput = Schema<'Simulation'>;
export type NewSimulationInput = Schema<'NewPolicySimulation'>;
export type SimulationOutput = Schema<'SimulationResult'>;
export type DecisionRequestInput = Schema<'DecisionRequest'>;
/** What the live tests read of a decision. */
export type DecisionOutput = Pick<Schema<'Decision'>, 'allowed' | 'reasons'>;

/**
 * A checked body (src/policies) as the client sends it, `status` always given. The body was
 * checked against the very schema the client's type is generated from, whose TypeScript reading
 * is only looser on the search operators of `match`.
 */
export const wireBody = (body: PolicyBody): PolicyBodyInput =>
  ({ ...body, status: body.status ?? 'active' }) as PolicyBodyInput;

/** Sent with a write, so that its audit event can be told apart (`request_id`). */
export interface WriteTag {
  requestId: string;
}

export interface PolicyApi {
  /** Every policy that is not deleted. */
  list(): Promise<LivePolicyRecord[]>;
  create(body: PolicyBodyInput, tag: WriteTag): Promise<LivePolicyRecord>;
  /** A full replacement, only if the policy is still at `version` (`If-Match`). */
  replace(id: string, version: number, body: PolicyBodyInput, tag: WriteTag): Promise<LivePolicyRecord>;
  /** A deletion, only if the policy is still at `version` (`If-Match`); answers who deleted it. */
  remove(id: string, version: number, tag: WriteTag): Promise<{ deleted_by: string }>;
  /** A change to a stored policy, simulated: its replacement by `policy`, or its deletion. */
  simulate(id: string, body: SimulationInput): Promise<SimulationOutput>;
  /** A policy not created yet, simulated as if it were; the answer has no `policy_id`. */
  simulateNew(body: NewSimulationInput): Promise<SimulationOutput>;
  /** Each request decided, in order. */
  decide(requests: readonly DecisionRequestInput[]): Promise<DecisionOutput[]>;
}

/** Pages of the policy list: the most the service answers per page. */
const PAGE = 100;
/** Requests per batch: the most the service takes in one. */
const BATCH = 1000;

/**
 * The policy commands' view of the service through the typed client. Each write's
 * `Consistency-Token` is sent back with every later request, so that what follows a write (a
 * plan, a live test) sees it on whichever instance answers.
 */
export function policyApi(client: PasClient): PolicyApi {
  let consistency: string | undefined;
  const fresh = (): Record<string, string> => (consistency ? { 'Consistency-Token': consistency } : {});
  const written = <T extends { response: Response }>(result: T): T => {
    consistency = result.response.headers.get('Consistency-Token') ?? consistency;
    return result;
  };
  const ifMatch = (version: number): string => `"${version}"`;
  return {
    async list() {
      const out: LivePolicyRecord[] = [];
      for (let page = 1; ; page++) {
        const body = unwrap(
          await client.GET('/v1/policies', { params: { query: { page, limit: PAGE } }, headers: fresh() }),
        );
        out.push(...body.data);
        if (page >= body.pagination.pages) return out;
      }
    },
    async create(body, tag) {
      return unwrap(
        written(
          await client.POST('/v1/policies', { body, headers: { ...fresh(), 'X-Request-Id': tag.requestId } }),
        ),
      );
    },
    async replace(id, version, body, tag) {
      return unwrap(
        written(
          await client.PUT('/v1/policies/{id}', {
            params: { path: { id } },
            body,
            headers: { ...fresh(), 'If-Match': ifMatch(version), 'X-Request-Id': tag.requestId },
          }),
        ),
      );
    },
    async remove(id, version, tag) {
      return unwrap(
        written(
          await client.DELETE('/v1/policies/{id}', {
            params: { path: { id } },
            headers: { ...fresh(), 'If-Match': ifMatch(version), 'X-Request-Id': tag.requestId },
          }),
        ),
      );
    },
    async simulate(id, body) {
      return unwrap(
        await client.POST('/v1/policies/{id}/simulate', { params: { path: { id } }, body, headers: fresh() }),
      );
    },
    async simulateNew(body) {
      return unwrap(await client.POST('/v1/policies/simulate', { body, headers: fresh() }));
    },
    async decide(requests) {
      const out: DecisionOutput[] = [];
      for (let i = 0; i < requests.length; i += BATCH) {
        const batch = requests.slice(i, i + BATCH);
        const answer = unwrap(
          await client.POST('/v1/decisions/batch', { body: { requests: batch }, headers: fresh() }),
        );
        out.push(...answer.results);
      }
      return out;
    },
  };
}

/** The HTTP status of a refusal by the service, if `err` is one. */
export function statusOf(err: unknown): number | undefined {
  return err instanceof PasApiError ? err.status : undefined;
}

export { PasApiError };
