import { parentPort, type MessagePort } from 'node:worker_threads';
import { MemorySections } from '../columnar/sections.js';
import { AppError } from '../errors/errors.js';
import type { DecisionRequest } from '../schemas/decisions.js';
import { runInBackground } from '../threads/thread.js';
import { applyChanges, type BatchCauses, type Fetched, type Pending } from './apply.js';
import { readBatchBody } from './batch-body.js';
import type { DecideTask, Decided, FromThread, ToThread } from './decision-thread.js';
import { PolicyIndex } from './policy-index.js';
import { recordLine, RecordLinesBuilder } from './records.js';
import { decideList } from './service.js';
import { simulate } from './simulation.js';

/**
 * A decision thread (src/decisions/decision-thread.ts): a replica of the decision index, seeded
 * from the index in use and sent each batch of changes it applies, and the tasks it decides over
 * that replica. Messages are taken one at a time, in the order sent.
 */

/**
 * Watches the batches a replica applies that the index in use sends with their causes (the
 * access history computes what they moved, src/access-history/thread-worker.ts): called before a
 * batch is applied, it answers what to call once it is, whose result goes back to the index in
 * use with the buffers named moved rather than copied; what it hands on before goes back first,
 * in order.
 */
export interface ReplicaWatch {
  before(
    index: PolicyIndex,
    work: Pending,
    causes: BatchCauses,
    /** When the index in use applied the batch (epoch ms). */
    at: number,
  ): Promise<(handOn: (some: Watched) => void) => Promise<Watched>>;
}

/** What a watch sends back, with the buffers to move rather than copy. */
export interface Watched {
  result: unknown;
  transfer: ArrayBuffer[];
}

let port: MessagePort;
let index = new PolicyIndex();
let watch: ReplicaWatch | undefined;
/** Rows of a large batch of changes sent ahead of it. */
let ahead: Pick<Fetched, 'principals' | 'memberships'> = { principals: [], memberships: [] };

async function decideAll(task: DecideTask): Promise<Decided> {
  const lines = new RecordLinesBuilder();
  const detailsLost: string[] = [];
  const answer = await decideList(index, task, (decision, details, json) =>
    lines.add(
      recordLine(decision, details, json, () => detailsLost.push(decision.id)),
      decision,
    ),
  );
  return { ...answer, records: lines.build(), detailsLost };
}

/** A batch read from its body here (see `DecisionThreads.decideBody`), its answer as UTF-8 bytes. */
async function decideBody(body: Uint8Array): Promise<Decided> {
  let requests: DecisionRequest[];
  try {
    requests = readBatchBody(body);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const refused = { code: err.code, message: err.message, errors: err.errors };
    return { refused, records: new RecordLinesBuilder().build(), detailsLost: [] };
  }
  const { body: text, ...rest } = await decideAll({
    items: requests.map((request) => ({ request })),
    shape: 'batch',
  });
  return { ...rest, answer: new TextEncoder().encode(text) };
}

async function take(message: ToThread): Promise<void> {
  switch (message.kind) {
    case 'seed':
      index = PolicyIndex.restore(new MemorySections(message.held));
      index.version = message.version;
      return;
    case 'rows':
      ahead.principals.push(...message.principals);
      ahead.memberships.push(...message.memberships);
      return;
    case 'apply': {
      const fetched: Fetched = {
        ...message.fetched,
        principals: ahead.principals.length > 0 ? ahead.principals : message.fetched.principals,
        memberships: ahead.memberships.length > 0 ? ahead.memberships : message.fetched.memberships,
      };
      ahead = { principals: [], memberships: [] };
      const watched =
        message.causes && watch
          ? await watch.before(index, message.work, new Map(message.causes), message.at ?? Date.now())
          : undefined;
      await applyChanges(index, message.work, fetched, null);
      index.version = message.version;
      if (message.causes) {
        const handOn = ({ result, transfer }: Watched) =>
          port.postMessage({ kind: 'watching', result } satisfies FromThread, transfer);
        const { result, transfer } = (await watched?.(handOn)) ?? { result: undefined, transfer: [] };
        port.postMessage({ kind: 'watched', result } satisfies FromThread, transfer);
      }
      return;
    }
    case 'privileges':
      for (const { id, privileges } of message.rows) index.setPrivileges(id, privileges);
      return;
    case 'decide':
    case 'decide-body':
    case 'simulate': {
      let reply: FromThread;
      try {
        const result =
          message.kind === 'decide'
            ? await decideAll(message.task)
            : message.kind === 'decide-body'
              ? await decideBody(message.body)
              : await simulate(index, message.input);
        reply = { kind: 'answer', seq: message.seq, ok: true, result };
      } catch (err) {
        reply = {
          kind: 'answer',
          seq: message.seq,
          ok: false,
          message: (err as Error).message ?? String(err),
        };
      }
      if (message.kind !== 'simulate' && reply.ok) {
        const { records, answer } = reply.result as Decided;
        const moved = [records.bytes.buffer, records.ends.buffer, ...(answer ? [answer.buffer] : [])];
        port.postMessage(reply, moved as ArrayBuffer[]);
      } else port.postMessage(reply);
      return;
    }
    case 'close':
      process.exit(0);
  }
}

/** Runs this thread as a decision thread, with `watcher` watching the batches sent with causes. */
export function serveReplica(watcher?: ReplicaWatch): void {
  port = parentPort!;
  watch = watcher;
  runInBackground();
  let queue = Promise.resolve();
  port.on('message', (message: ToThread) => {
    queue = queue.then(() =>
      take(message).catch((err: unknown) => {
        // A replica that missed a change would decide on what is no longer so: it stops, and is
        // started again from the index in use.
        port.postMessage({
          kind: 'problem',
          message: (err as Error).message ?? String(err),
        } satisfies FromThread);
        process.exit(1);
      }),
    );
  });
}
