import { notFound } from '../errors/errors.js';
import { newId } from '../ids.js';
import type { Decision, DecisionRequest, Reason } from '../schemas/decisions.js';
import { nowIso, timeSlices } from '../time.js';
import { actionNameOf, decide, type Verdict } from './engine.js';
import type { PolicyIndex } from './index.js';
import type { DecisionLog, DecisionRecord } from './records.js';

export interface BatchResult {
  results: Decision[];
  summary: { total: number; allowed: number; denied: number };
}

/**
 * Real-time decisions (API.md §5.2-5.4): answered from the in-memory index, each recorded by the
 * decision log without waiting for it.
 */
export class DecisionService {
  constructor(
    private readonly index: PolicyIndex,
    private readonly log: DecisionLog,
  ) {}

  /**
   * Decides a request and records the decision. `refusal` is a deny settled before the engine
   * looks (a standard interface naming a subject or an action that no policy can reach): it is
   * answered and recorded like any other decision.
   */
  evaluate(request: DecisionRequest, refusal?: Reason): Decision {
    const verdict: Verdict = refusal
      ? { allowed: false, reasons: [refusal], grantedBy: [] }
      : decide(this.index, request, { explain: request.explain === true });
    const decision: Decision = {
      id: newId('decision'),
      decision: verdict.allowed ? 'ALLOW' : 'DENY',
      allowed: verdict.allowed,
      principal_id: request.principal_id,
      action: actionNameOf(request.action),
      resource: { type: request.resource.type, identifier: request.resource.identifier },
      ...(request.on_behalf_of !== undefined ? { on_behalf_of: request.on_behalf_of } : {}),
      reasons: verdict.reasons,
      granted_by: verdict.grantedBy,
      evaluated_at: nowIso(),
      ...(verdict.trace ? { trace: { index_version: this.index.version, ...verdict.trace } } : {}),
    };
    const record: DecisionRecord = decision;
    const actionProperties = typeof request.action === 'string' ? undefined : request.action.properties;
    this.log.record(
      request.context === undefined &&
        request.resource.attributes === undefined &&
        actionProperties === undefined &&
        request.subject_properties === undefined
        ? record
        : {
            ...record,
            ...(request.context !== undefined ? { context: request.context } : {}),
            ...(request.resource.attributes !== undefined
              ? { resource_attributes: request.resource.attributes }
              : {}),
            ...(actionProperties !== undefined ? { action_properties: actionProperties } : {}),
            ...(request.subject_properties !== undefined
              ? { subject_properties: request.subject_properties }
              : {}),
          },
    );
    return decision;
  }

  /**
   * Decides the requests in order. Between slices of a few milliseconds the event loop serves
   * other requests, so a batch of a thousand never holds single decisions up for longer than
   * that; each decision reflects the index as it stands when that decision is made.
   */
  async batch(requests: readonly DecisionRequest[]): Promise<BatchResult> {
    const results: Decision[] = [];
    const turn = timeSlices();
    for (const request of requests) {
      await turn();
      results.push(this.evaluate(request));
    }
    const allowed = results.filter((r) => r.allowed).length;
    return { results, summary: { total: results.length, allowed, denied: results.length - allowed } };
  }

  async get(id: string): Promise<DecisionRecord> {
    const record = await this.log.get(id);
    if (!record) throw notFound('decision', id);
    return record;
  }
}
