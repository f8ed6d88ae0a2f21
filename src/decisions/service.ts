import { notFound } from '../errors/errors.js';
import { newId } from '../ids.js';
import type { Decision, DecisionRequest, Reason } from '../schemas/decisions.js';
import { Serialised } from '../json.js';
import { nowIso, timeSlices } from '../time.js';
import { actionNameOf, decide, type Verdict } from './engine.js';
import type { PolicyIndex } from './policy-index.js';
import type { DecisionLog, DecisionRecord } from './records.js';

export interface BatchResult {
  results: Decision[];
  summary: { total: number; allowed: number; denied: number };
}

/**
 * Real-time decisions (docs/api.md §5.2-5.4): answered from the in-memory index, each recorded by the
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
    return this.decideAndRecord(request, refusal).value;
  }

  /** `evaluate`, with the answer's JSON: made once, for the record and the response alike. */
  answer(request: DecisionRequest): Serialised<Decision> {
    return this.decideAndRecord(request);
  }

  /**
   * Decides the requests in order. Between slices of a few milliseconds the event loop serves
   * other requests, so a batch of a thousand never holds single decisions up for longer than
   * that; each decision reflects the index as it stands when that decision is made.
   */
  async batch(requests: readonly DecisionRequest[]): Promise<Serialised<BatchResult>> {
    const texts: string[] = [];
    let allowed = 0;
    const turn = timeSlices();
    for (const request of requests) {
      await turn();
      const { value, json } = this.decideAndRecord(request);
      if (value.allowed) allowed += 1;
      texts.push(json);
    }
    const summary = { total: texts.length, allowed, denied: texts.length - allowed };
    return new Serialised(`{"results":[${texts.join(',')}],"summary":${JSON.stringify(summary)}}`);
  }

  private decideAndRecord(request: DecisionRequest, refusal?: Reason): Serialised<Decision> {
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
      reasons: verdict.reasons,
      granted_by: verdict.grantedBy,
      evaluated_at: nowIso(),
    };
    // Optional members are added after: an object literal of one shape is what every answer
    // shares, and what serialises fastest.
    if (request.on_behalf_of !== undefined) {
      decision.on_behalf_of =
        typeof request.on_behalf_of === 'string' ? [request.on_behalf_of] : [...request.on_behalf_of];
    }
    if (verdict.trace) decision.trace = { index_version: this.index.version, ...verdict.trace };
    const json = JSON.stringify(decision);
    const actionProperties = typeof request.action === 'string' ? undefined : request.action.properties;
    const { context, subject_properties: subjectProperties } = request;
    const attributes = request.resource.attributes;
    this.log.record(
      decision,
      context === undefined &&
        attributes === undefined &&
        actionProperties === undefined &&
        subjectProperties === undefined
        ? undefined
        : {
            context,
            resource_attributes: attributes,
            action_properties: actionProperties,
            subject_properties: subjectProperties,
          },
      json,
    );
    return new Serialised(json, decision);
  }

  async get(id: string): Promise<DecisionRecord> {
    const record = await this.log.get(id);
    if (!record) throw notFound('decision', id);
    return record;
  }
}
