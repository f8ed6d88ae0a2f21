import { AppError, notFound } from '../errors/errors.js';
import { newId } from '../ids.js';
import type {
  Decision,
  DecisionListRequest,
  DecisionRecordList,
  DecisionRequest,
  Reason,
} from '../schemas/decisions.js';
import { Serialised, type JsonBytes } from '../json.js';
import { nowIso, timeSlices } from '../time.js';
import { actionNameOf, decide, type Verdict } from './engine.js';
import type { PolicyIndex } from './policy-index.js';
import { whyNot } from './why-not.js';
import { readBatchBody } from './batch-body.js';
import type { DecisionLog, DecisionRecord, RequestDetails } from './records.js';
import { ThreadLost } from '../threads/thread.js';
import { inSpan, inSpanSync, tracing, type Attributes, type Span } from '../tracing/tracing.js';
import {
  type Brief,
  type DecideTask,
  type Decided,
  type DecisionThreads,
  type ManyItem,
} from './decision-thread.js';

/**
 * Lists shorter than this are decided in place: handing them to a thread and back costs about
 * what deciding them does.
 */
const THREAD_MIN_ITEMS = 16;
/** A batch's body this long or longer goes to a thread unread (about `THREAD_MIN_ITEMS` requests). */
const THREAD_MIN_BYTES = 2048;

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
    /** Where lists of decisions are decided, when there are threads (src/decisions/decision-thread.ts). */
    private readonly threads?: DecisionThreads,
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
   * Decides the requests in order: on a decision thread when there is one (its replica holds every
   * change applied before the batch), else here, the event loop serving other requests between
   * slices of a few milliseconds, so that a batch of a thousand never holds single decisions up
   * for longer than that. Each decision reflects the index as it stands when it is made.
   */
  async batch(requests: readonly DecisionRequest[]): Promise<Serialised<BatchResult>> {
    const task: DecideTask = { items: requests.map((request) => ({ request })), shape: 'batch' };
    const attributes = { 'pas.decision.count': requests.length };
    return inSpan('decision batch', { attributes }, async () => {
      const { body } = (await this.onThread(task)) ?? (await this.inPlace(task));
      return new Serialised(body!);
    });
  }

  /**
   * A batch given as its body's bytes (`POST /v1/decisions/batch`, docs/api.md §5.2): a long one
   * goes to a decision thread unread, which reads and checks it, decides it and writes its answer,
   * so that the event loop only moves bytes; a short one, or one no thread can take, is read here
   * and decided as `batch` decides. A body that is not JSON, or not a batch, is refused the same
   * way wherever it is read.
   */
  async batchBody({ bytes }: JsonBytes): Promise<Serialised<BatchResult>> {
    if (this.threads && bytes.byteLength >= THREAD_MIN_BYTES) {
      const answer = await inSpan('decision batch', {}, async (span) => {
        const decided = await this.onThreadUnread(bytes);
        if (decided) span?.setAttribute('pas.decision.count', decided.records.ids.length);
        return decided?.answer;
      });
      if (answer) return new Serialised(Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength));
    }
    return this.batch(readBatchBody(bytes));
  }

  /**
   * Decides each item in order, stopping after the first deny (a null item counts as one) or the
   * first permit when told: the decisions of an AuthZEN evaluation list. A null item stays null.
   */
  async many(items: (ManyItem | null)[], stop?: 'deny' | 'permit'): Promise<(Brief | null)[]> {
    const task: DecideTask = { items, shape: 'brief', stop };
    const { brief } = (await this.onThread(task)) ?? (await this.inPlace(task));
    return brief!;
  }

  /** A list decided on this thread, in slices, each decision recorded as it is made. */
  private inPlace(task: DecideTask): Promise<DecidedList> {
    return decideList(
      this.index,
      task,
      (decision, details, json) => this.log.record(decision, details, json),
      timeSlices(),
    );
  }

  /**
   * A list decided on a decision thread, its records queued here; undefined when it is short
   * enough to decide in place, or no thread can take it (none holds a replica, or the one that
   * took it stopped before answering).
   */
  private async onThread(task: DecideTask): Promise<Decided | undefined> {
    if (task.items.length < THREAD_MIN_ITEMS) return undefined;
    let decided: Decided | undefined;
    try {
      decided = await this.threads?.decide(task);
    } catch (err) {
      if (err instanceof ThreadLost) return undefined;
      throw err;
    }
    if (!decided) return undefined;
    this.log.recordLines(decided.records);
    this.log.detailsLost(decided.detailsLost);
    return decided;
  }

  /**
   * A batch's body read and decided on a decision thread, its records queued here; undefined when
   * no thread can take it (see `onThread`). The thread is given a copy: the bytes stay readable
   * here if it stops first.
   */
  private async onThreadUnread(bytes: Uint8Array): Promise<Decided | undefined> {
    let decided: Decided | undefined;
    try {
      decided = await this.threads?.decideBody(new Uint8Array(bytes));
    } catch (err) {
      if (err instanceof ThreadLost) return undefined;
      throw err;
    }
    if (!decided) return undefined;
    if (decided.refused) {
      const { code, message, errors } = decided.refused;
      throw new AppError(code, message, { errors });
    }
    this.log.recordLines(decided.records);
    this.log.detailsLost(decided.detailsLost);
    return decided;
  }

  private decideAndRecord(request: DecisionRequest, refusal?: Reason): Serialised<Decision> {
    const { decision, json } = tracing()
      ? inSpanSync(
          'decision',
          requestAttributes(request),
          () => decisionOf(this.index, request, refusal),
          describe,
        )
      : decisionOf(this.index, request, refusal);
    this.log.record(decision, detailsOf(request), json);
    return new Serialised(json, decision);
  }

  async get(id: string): Promise<DecisionRecord> {
    const record = await this.log.get(id);
    if (!record) throw notFound('decision', id);
    return record;
  }

  /** Recorded decisions after a cursor, in the order they were made, once older than `settleMs`. */
  list(query: DecisionListRequest, settleMs: number): Promise<DecisionRecordList> {
    return this.log.list(query, settleMs);
  }
}

/** Decides a request (or answers a refusal settled before the engine looks): the answer and its JSON. */
export function decisionOf(
  index: PolicyIndex,
  request: DecisionRequest,
  refusal?: Reason,
): { decision: Decision; json: string } {
  const verdict: Verdict = refusal
    ? { allowed: false, reasons: [refusal], grantedBy: [] }
    : decide(index, request, { explain: request.explain === true });
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
  if (verdict.trace) {
    decision.trace = { index_version: index.version, ...verdict.trace };
    // Why not, and what would let it through: for a denial the engine decided (a refusal settled
    // before it looked has no trace to read).
    if (!verdict.allowed) {
      const { near_misses: nearMisses, remedies } = whyNot(index, request, verdict);
      decision.near_misses = nearMisses;
      decision.remedies = remedies;
    }
  }
  return { decision, json: JSON.stringify(decision) };
}

/** What a record keeps of a request beyond its answer; undefined when it sent nothing more. */
export function detailsOf(request: DecisionRequest): RequestDetails | undefined {
  const actionProperties = typeof request.action === 'string' ? undefined : request.action.properties;
  const { context, subject_properties: subjectProperties } = request;
  const attributes = request.resource.attributes;
  return context === undefined &&
    attributes === undefined &&
    actionProperties === undefined &&
    subjectProperties === undefined
    ? undefined
    : {
        context,
        resource_attributes: attributes,
        action_properties: actionProperties,
        subject_properties: subjectProperties,
      };
}

/** A list's answer: the body of a batch answer, or each decision's id, answer and reasons. */
export type DecidedList = Pick<Decided, 'body' | 'brief'>;

/**
 * Decides a list in order (see `DecisionService.batch` and `many`), handing each decision, its
 * request's details and its JSON to `record`; with `turn`, the event loop turns between slices.
 * The one loop both the event loop and a decision thread run.
 */
export async function decideList(
  index: PolicyIndex,
  { items, shape, stop }: DecideTask,
  record: (decision: Decision, details: RequestDetails | undefined, json: string) => void,
  turn?: () => Promise<void> | undefined,
): Promise<DecidedList> {
  const texts: string[] = [];
  const brief: (Brief | null)[] = [];
  let allowed = 0;
  for (const item of items) {
    // Only a slice's end waits: a turn not due answers nothing, and nothing is awaited.
    const wait = turn?.();
    if (wait) await wait;
    if (item === null) {
      brief.push(null);
      if (stop === 'deny') break;
      continue;
    }
    const { decision, json } = decisionOf(index, item.request, item.refusal);
    record(decision, detailsOf(item.request), json);
    if (decision.allowed) allowed += 1;
    if (shape === 'batch') texts.push(json);
    else brief.push({ id: decision.id, allowed: decision.allowed, reasons: decision.reasons });
    if (stop === (decision.allowed ? 'permit' : 'deny')) break;
  }
  if (shape === 'brief') return { brief };
  const summary = { total: texts.length, allowed, denied: texts.length - allowed };
  return { body: `{"results":[${texts.join(',')}],"summary":${JSON.stringify(summary)}}` };
}

/** What a decision's span says of the request. */
function requestAttributes(request: DecisionRequest): Attributes {
  return {
    'pas.principal.id': request.principal_id,
    'pas.action': actionNameOf(request.action),
    'pas.resource.type': request.resource.type,
    'pas.resource.id': request.resource.identifier,
  };
}

/** What a decision's span says of the answer: the decision and the policies behind it. */
function describe(span: Span, { decision }: { decision: Decision }): void {
  const policies = new Set<string>();
  for (const reason of decision.reasons) if (reason.policy_id) policies.add(reason.policy_id);
  span.setAttributes({
    'pas.decision': decision.decision,
    'pas.decision.id': decision.id,
    'pas.decision.policy_ids': [...policies],
    'pas.decision.reasons': decision.reasons.map((r) => r.code),
  });
}
