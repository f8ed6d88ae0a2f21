/**
 * The status poller of bench/scim.ts's sync rounds, in a process of its own as an operator's
 * script would be: it GETs a sync's status every `intervalMs` over one kept-alive connection
 * until the sync completes or fails, and answers with how each poll went. A poll that fails (the
 * connection dropped, a status other than 200) is counted with its cause, and polling goes on.
 */

export interface PollRun {
  /** The sync's absolute URL. */
  url: string;
  token: string;
  intervalMs: number;
  timeoutS: number;
}

export interface SyncState {
  status: string;
  progress?: { phase?: string; processed?: number; total?: number } | null;
  counts?: unknown;
  errors?: unknown[];
  error?: unknown;
}

export interface PollResult {
  /** From the first poll until the sync was seen completed or failed. */
  seconds: number;
  final: SyncState | null;
  /** Each answered poll's latency in ms, from sending until its body was read. */
  latencies: number[];
  /** Polls that got no answer, or not a 200, with the cause (the first few). */
  failures: number;
  failureCauses: string[];
  /** When each phase the progress showed was first seen, in seconds from the first poll. */
  phases: { phase: string; at: number }[];
}

function causeOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? `${(cause as { code?: string }).code ?? ''} ${cause.message}` : '';
  return `${err.message}${inner ? `: ${inner.trim()}` : ''}`;
}

async function poll(run: PollRun): Promise<PollResult> {
  const began = process.hrtime.bigint();
  const elapsed = (): number => Number(process.hrtime.bigint() - began) / 1e9;
  const latencies: number[] = [];
  const failureCauses: string[] = [];
  const phases: { phase: string; at: number }[] = [];
  let failures = 0;
  for (;;) {
    const t0 = process.hrtime.bigint();
    try {
      const res = await fetch(run.url, { headers: { authorization: `Bearer ${run.token}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`status ${res.status}: ${text.slice(0, 200)}`);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const state = JSON.parse(text) as SyncState;
      const phase = state.progress?.phase;
      if (phase && phases.at(-1)?.phase !== phase) phases.push({ phase, at: elapsed() });
      if (state.status === 'completed' || state.status === 'failed') {
        return { seconds: elapsed(), final: state, latencies, failures, failureCauses, phases };
      }
    } catch (err) {
      failures += 1;
      if (failureCauses.length < 10) failureCauses.push(`${elapsed().toFixed(1)} s: ${causeOf(err)}`);
    }
    if (elapsed() > run.timeoutS) {
      return { seconds: elapsed(), final: null, latencies, failures, failureCauses, phases };
    }
    await new Promise((resolve) => setTimeout(resolve, run.intervalMs));
  }
}

process.on('message', (run: PollRun) => {
  poll(run).then(
    (result) => process.send!({ ok: true, result }),
    (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
