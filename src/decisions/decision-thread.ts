import { once } from 'node:events';
import { setImmediate } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { MemorySections, type HeldSections } from '../columnar/sections.js';
import type { ErrorCode, FieldError } from '../errors/errors.js';
import type { ChangeEvent } from '../events/feed.js';
import type { Logger } from '../logging/logger.js';
import type { DecisionRequest, Reason } from '../schemas/decisions.js';
import { ThreadLost, workerThread } from '../threads/thread.js';
import { PRINCIPAL_SLICE, type BatchCauses, type Fetched, type Pending } from './apply.js';
import type { PolicyIndex } from './policy-index.js';
import type { RecordLines } from './records.js';
import type { SimulationInput, SimulationResult } from './simulation.js';

/**
 * Decision threads: worker threads that decide batches, AuthZEN evaluation lists and policy
 * simulations, each over a replica of the decision index, so that a batch of a thousand takes
 * another core rather than the event loop that answers single decisions.
 *
 * A replica starts from the index in use, copied into sections (the layout of the index's
 * snapshot, src/decisions/snapshot.ts) whose memory moves to the thread. From then on it is sent
 * every batch of changes the index in use applies (the keys and the rows read for them), and
 * applies it the same way (src/decisions/apply.ts). A thread takes its messages in order, so a
 * task sent after a change is in the index in use is decided with that change: a write acknowledged
 * before a batch is seen by the batch, on whichever thread decides it.
 */

/** A decision to make on a thread, or null for a place the caller fills (a malformed evaluation). */
export interface ManyItem {
  request: DecisionRequest;
  /** A deny settled before the engine looks (see `DecisionService.evaluate`). */
  refusal?: Reason | undefined;
}

/** What an AuthZEN list keeps of each decision. */
export interface Brief {
  id: string;
  allowed: boolean;
  reasons: Reason[];
}

export interface DecideTask {
  items: (ManyItem | null)[];
  /** `batch`: the body of a batch answer; `brief`: each decision's id, answer and reasons. */
  shape: 'batch' | 'brief';
  /** Stop after the first deny (a null place counts as one) or the first permit. */
  stop?: 'deny' | 'permit' | undefined;
}

export interface Decided {
  body?: string;
  brief?: (Brief | null)[];
  /** A batch read from its body on the thread: the body of its answer, as UTF-8 bytes. */
  answer?: Uint8Array;
  /** A batch whose body the thread refused (not JSON, or not a batch): why, as the edge says it. */
  refused?: { code: ErrorCode; message: string; errors?: FieldError[] | undefined };
  /** The records of the decisions made, for the decision log. */
  records: RecordLines;
  /** Records that lost their request details (a value that could not be serialised). */
  detailsLost: string[];
}

/** Messages to a thread, taken in the order sent. */
export type ToThread =
  | { kind: 'seed'; held: HeldSections; version: number }
  | { kind: 'rows'; principals: Fetched['principals']; memberships: Fetched['memberships'] }
  | {
      kind: 'apply';
      work: Pending;
      fetched: Fetched;
      version: number;
      /** Given: the thread's watch computes what the batch moved, and sends it back. */
      causes?: [string, ChangeEvent][];
      /** When the index in use applied it (epoch ms), sent with `causes`. */
      at?: number;
    }
  | { kind: 'privileges'; rows: { id: string; privileges: string }[] }
  | { kind: 'decide'; seq: number; task: DecideTask }
  /** A batch as its body's bytes: the thread reads and checks it, then decides it. */
  | { kind: 'decide-body'; seq: number; body: Uint8Array }
  | { kind: 'simulate'; seq: number; input: SimulationInput }
  | { kind: 'close' };

/** Answers to tasks, and what went wrong outside one (a change the replica could not apply). */
export type FromThread =
  | { kind: 'answer'; seq: number; ok: true; result: unknown }
  | { kind: 'answer'; seq: number; ok: false; message: string }
  /** What a watch hands on while it computes a batch's result (`watched` ends it). */
  | { kind: 'watching'; result: unknown }
  | { kind: 'watched'; result: unknown }
  | { kind: 'problem'; message: string };

/** What keeps a replica's index following the index in use (src/decisions/sync.ts). */
export interface DecisionReplicas {
  /**
   * Starts every replica from `index` as it now is; `between` runs work between two batches of
   * changes (where a replica started again later must be seeded).
   */
  seed(index: PolicyIndex, between: (work: () => Promise<void>) => Promise<void>): void;
  /**
   * Whether a thread now watches the batches it is sent with their causes (the access history's
   * computation runs there rather than on the event loop).
   */
  readonly watching: boolean;
  /**
   * A batch of changes the index in use applies, which makes it `version`; with `causes`, the
   * watching thread also computes what it moved. Answers whether one will.
   */
  apply(work: Pending, fetched: Fetched, version: number, causes?: BatchCauses): Promise<boolean>;
  privileges(rows: readonly { id: string; privileges: string }[]): void;
}

interface Slot {
  worker: Worker | undefined;
  /** Batches sent with their causes whose result has not come back yet. */
  watched: number;
  waiting: Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>;
  /** When it last stopped unasked: one that keeps stopping starts again at most every few seconds. */
  stoppedAt: number;
}

/** How long a closing thread may take to finish what it holds. */
const CLOSE_WAIT_MS = 10_000;
const RESTART_PAUSE_MS = 2_000;

/** The module a decision thread runs (beside `here`, a module's URL): one calling `serveReplica`. */
export interface ThreadModule {
  here: string;
  name: string;
}

const PLAIN: ThreadModule = { here: import.meta.url, name: 'decision-thread-worker' };

export class DecisionThreads implements DecisionReplicas {
  private readonly slots: Slot[];
  private index: PolicyIndex | undefined;
  /** Takes what the first thread's watch sends back, in the order the batches were applied. */
  private sink: ((result: unknown, last: boolean) => void) | undefined;
  /** Settle once the results of the batches watched so far are back (or the thread is gone). */
  private drains: { until: number; done: () => void }[] = [];
  /** Watched batches sent, and their results taken (or lost with a thread), since the start. */
  private watchedSent = 0;
  private watchedBack = 0;
  private between: ((work: () => Promise<void>) => Promise<void>) | undefined;
  private seq = 0;
  private closing = false;
  /** Tasks decided on the threads, for /metrics. */
  tasks = 0;

  constructor(
    count: number,
    private readonly logger: Logger,
    /** What the threads run: a module that watches batches, where one should. */
    private readonly module: ThreadModule = PLAIN,
  ) {
    this.slots = Array.from({ length: count }, () => ({
      worker: undefined,
      watched: 0,
      waiting: new Map(),
      stoppedAt: 0,
    }));
  }

  /**
   * Has the first thread's watch results go to `sink`, in batch order, from now on: a batch's in
   * one or more pieces, `last` with its last.
   */
  watch(sink: (result: unknown, last: boolean) => void): void {
    this.sink = sink;
  }

  get watching(): boolean {
    return this.sink !== undefined && this.module !== PLAIN && this.slots[0]?.worker !== undefined;
  }

  /** Whether batches sent to be watched still wait for their results. */
  get computing(): boolean {
    return this.watchedBack < this.watchedSent;
  }

  /** Settles once the results of every batch watched until now have come back, or are lost. */
  watched(): Promise<void> {
    if (this.watchedBack >= this.watchedSent) return Promise.resolve();
    const until = this.watchedSent;
    return new Promise((done) => this.drains.push({ until, done }));
  }

  /** Threads holding a replica now. */
  get ready(): number {
    return this.slots.filter((s) => s.worker !== undefined).length;
  }

  seed(index: PolicyIndex, between: (work: () => Promise<void>) => Promise<void>): void {
    this.index = index;
    this.between = between;
    for (const slot of this.slots) if (!this.closing) this.seedSlot(slot);
  }

  async apply(work: Pending, fetched: Fetched, version: number, causes?: BatchCauses): Promise<boolean> {
    const live = this.slots.filter((s) => s.worker !== undefined);
    if (live.length === 0) return false;
    // The rows of a large batch (a connector's sync names tens of thousands of principals) go
    // ahead in slices, each copied for the threads between two turns of the event loop.
    const { principals, memberships } = fetched;
    const sliced = principals.length + memberships.length > PRINCIPAL_SLICE;
    if (sliced) {
      for (let at = 0; at < Math.max(principals.length, memberships.length); at += PRINCIPAL_SLICE) {
        const rows: ToThread = {
          kind: 'rows',
          principals: principals.slice(at, at + PRINCIPAL_SLICE),
          memberships: memberships.slice(at, at + PRINCIPAL_SLICE),
        };
        for (const slot of live) slot.worker?.postMessage(rows);
        await setImmediate();
      }
    }
    const rest: Fetched = sliced ? { ...fetched, principals: [], memberships: [] } : fetched;
    const message: ToThread = { kind: 'apply', work, fetched: rest, version };
    // The first thread, when it watches, is sent the causes too.
    const watcher = causes && this.watching ? this.slots[0] : undefined;
    for (const slot of live) {
      if (slot === watcher && slot.worker) {
        slot.worker.postMessage({ ...message, causes: [...causes!], at: Date.now() } satisfies ToThread);
        slot.watched += 1;
        this.watchedSent += 1;
        slot.worker.ref();
      } else slot.worker?.postMessage(message);
    }
    return watcher?.worker !== undefined;
  }

  privileges(rows: readonly { id: string; privileges: string }[]): void {
    const message: ToThread = { kind: 'privileges', rows: [...rows] };
    for (const slot of this.slots) slot.worker?.postMessage(message);
  }

  /**
   * Decides on the least busy thread; undefined when no thread holds a replica (the caller
   * decides in place). Rejects with `ThreadLost` when the thread stops first (the caller then decides in place).
   */
  decide(task: DecideTask): Promise<Decided> | undefined {
    return this.run((seq) => ({ kind: 'decide', seq, task })) as Promise<Decided> | undefined;
  }

  /**
   * Reads a batch's body, then decides it (see `decide`); its memory moves to the thread. Answers
   * the batch's answer as bytes, or why its body is refused.
   */
  decideBody(body: Uint8Array): Promise<Decided> | undefined {
    return this.run((seq) => ({ kind: 'decide-body', seq, body }), [body.buffer as ArrayBuffer]) as
      Promise<Decided> | undefined;
  }

  simulate(input: SimulationInput): Promise<SimulationResult> | undefined {
    return this.run((seq) => ({ kind: 'simulate', seq, input })) as Promise<SimulationResult> | undefined;
  }

  /** Stops the threads once the tasks they hold are answered. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.slots.map(async (slot) => {
        const worker = slot.worker;
        if (!worker) return;
        worker.postMessage({ kind: 'close' } satisfies ToThread);
        const timer = setTimeout(() => void worker.terminate(), CLOSE_WAIT_MS);
        try {
          await once(worker, 'exit');
        } finally {
          clearTimeout(timer);
        }
      }),
    );
  }

  private run(
    message: (seq: number) => ToThread,
    transfer: ArrayBuffer[] = [],
  ): Promise<unknown> | undefined {
    let best: Slot | undefined;
    for (const slot of this.slots) {
      if (slot.worker && (!best || slot.waiting.size < best.waiting.size)) best = slot;
    }
    const worker = best?.worker;
    if (!best || !worker) return undefined;
    const seq = (this.seq += 1);
    const waiting = best.waiting;
    const answered = new Promise((resolve, reject) => waiting.set(seq, { resolve, reject }));
    worker.ref();
    worker.postMessage(message(seq), transfer);
    this.tasks += 1;
    return answered;
  }

  private back(n: number): void {
    this.watchedBack += n;
    const still = [];
    for (const drain of this.drains) {
      if (this.watchedBack >= drain.until) drain.done();
      else still.push(drain);
    }
    this.drains = still;
  }

  private seedSlot(slot: Slot): void {
    const index = this.index!;
    const sections = new MemorySections();
    index.save(sections);
    const { held, transfer } = sections.handOver();
    const worker = slot.worker ?? this.start(slot);
    worker.postMessage({ kind: 'seed', held, version: index.version } satisfies ToThread, transfer);
  }

  private start(slot: Slot): Worker {
    const worker = workerThread(this.module.here, this.module.name, null);
    worker.unref();
    worker.on('message', (reply: FromThread) => {
      if (reply.kind === 'problem') {
        this.logger.warn({ reason: reply.message }, 'a decision thread could not apply a change');
        return;
      }
      if (reply.kind === 'watching') {
        this.sink?.(reply.result, false);
        return;
      }
      if (reply.kind === 'watched') {
        slot.watched -= 1;
        this.sink?.(reply.result, true);
        this.back(1);
        if (slot.watched === 0 && slot.waiting.size === 0) worker.unref();
        return;
      }
      const waiter = slot.waiting.get(reply.seq);
      if (!waiter) return;
      slot.waiting.delete(reply.seq);
      if (slot.waiting.size === 0 && slot.watched === 0) worker.unref();
      if (reply.ok) waiter.resolve(reply.result);
      else waiter.reject(new Error(reply.message));
    });
    worker.on('error', (err) => this.logger.error({ err }, 'a decision thread failed'));
    worker.on('exit', (code) => {
      if (slot.worker === worker) slot.worker = undefined;
      const lost = new ThreadLost(`the decision thread stopped (code ${code})`);
      for (const { reject } of slot.waiting.values()) reject(lost);
      slot.waiting.clear();
      if (slot.watched > 0) {
        this.logger.warn(
          { batches: slot.watched },
          'a decision thread stopped before answering what batches of changes moved; their access changes are lost',
        );
        this.back(slot.watched);
        slot.watched = 0;
      }
      if (this.closing) return;
      // Started again from the index as it then is, between two batches of changes.
      const pause = Date.now() - slot.stoppedAt < RESTART_PAUSE_MS * 5 ? RESTART_PAUSE_MS : 0;
      slot.stoppedAt = Date.now();
      const timer = setTimeout(() => {
        if (this.closing || slot.worker) return;
        void this.between?.(async () => {
          if (!this.closing && !slot.worker) this.seedSlot(slot);
        });
      }, pause);
      timer.unref();
    });
    slot.worker = worker;
    return worker;
  }
}
