/**
 * Progress of long work (a connector sync, a report) on stderr: a bar redrawn in place when
 * stderr is a terminal, else plain lines that a log or a CI job keeps readably: one when the
 * stage changes, and otherwise at most one every few seconds.
 */

export interface ProgressStep {
  /** What is being done now: a sync's phase, "running", "uploading". */
  stage: string;
  /** How far it is, with `total`; without `total`, `done` is a percentage. */
  done: number;
  total?: number;
}

export interface Progress {
  update(step: ProgressStep): void;
  /** Ends the display: the bar is cleared, so that what follows starts on a clean line. */
  finish(): void;
}

/** How often a plain line may repeat the same stage. */
const PLAIN_INTERVAL_MS = 2_000;
const BAR_WIDTH = 30;

interface Stream {
  write(text: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

export function createProgress(stream: Stream = process.stderr, title = ''): Progress {
  return stream.isTTY ? new Bar(stream, title) : new Lines(stream, title);
}

function percent(step: ProgressStep): number | undefined {
  if (step.total === undefined) return Math.min(100, Math.max(0, step.done));
  if (step.total <= 0) return undefined;
  return Math.min(100, Math.max(0, (step.done / step.total) * 100));
}

function figures(step: ProgressStep): string {
  const p = percent(step);
  const share = p === undefined ? '' : `${Math.floor(p)}%`;
  if (step.total === undefined) return share;
  return `${share}${share ? ' ' : ''}(${step.done.toLocaleString('en')}/${step.total.toLocaleString('en')})`;
}

class Bar implements Progress {
  private drawn = false;

  constructor(
    private readonly stream: Stream,
    private readonly title: string,
  ) {}

  update(step: ProgressStep): void {
    const p = percent(step);
    const filled = p === undefined ? 0 : Math.round((p / 100) * BAR_WIDTH);
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
    const prefix = this.title ? `${this.title} ` : '';
    let text = `${prefix}${bar} ${step.stage} ${figures(step)}`.trimEnd();
    const width = (this.stream.columns ?? 80) - 1;
    if (text.length > width) text = text.slice(0, width);
    // \r goes back to the start of the line and \x1b[K clears what the last draw left beyond it.
    this.stream.write(`\r${text}\x1b[K`);
    this.drawn = true;
  }

  finish(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.drawn = false;
  }
}

class Lines implements Progress {
  private lastStage: string | undefined;
  private lastText: string | undefined;
  private lastAt = 0;

  constructor(
    private readonly stream: Stream,
    private readonly title: string,
  ) {}

  update(step: ProgressStep): void {
    const text = `${this.title ? `${this.title}: ` : ''}${step.stage} ${figures(step)}`.trimEnd();
    const now = Date.now();
    const changedStage = step.stage !== this.lastStage;
    if (text === this.lastText) return;
    if (!changedStage && now - this.lastAt < PLAIN_INTERVAL_MS) return;
    this.stream.write(`${text}\n`);
    this.lastStage = step.stage;
    this.lastText = text;
    this.lastAt = now;
  }

  finish(): void {}
}
