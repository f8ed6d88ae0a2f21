/**
 * What the command line writes: tables and key/value blocks for people, JSON for scripts (on
 * stdout only, so that `pas … --json | jq` never sees a progress line or a warning), and errors
 * on stderr with the exit code they end the command with.
 */
import { InvalidArgumentError, type Command } from 'commander';

/** Exit codes: `check` answers 0 for ALLOW and 1 for DENY; every failure is 2. */
export const EXIT = { ok: 0, deny: 1, error: 2 } as const;

/** A failure the command explains itself: its message goes to stderr, and the command exits 2. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
  ) {
    super(message);
  }
}

export function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function note(text: string): void {
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** One JSON document on stdout, indented, as scripts read it. */
export function printJson(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

/** Whether the command, or the program around it, was given `--json`. */
export function wantsJson(command: Command): boolean {
  return command.optsWithGlobals<{ json?: boolean }>().json === true;
}

/** A cell as a person reads it: lists joined, nothing shown as `-`. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cell).join(', ');
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value) ?? '-';
}

/**
 * Rows under a header, each column as wide as its widest cell, separated by two spaces; the last
 * column is not padded, so that lines carry no trailing blanks.
 */
export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const texts = rows.map((row) => row.map(cell));
  const widths = headers.map((h, i) => Math.max(h.length, ...texts.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...texts.map(line)].join('\n');
}

/** `label: value` lines, the labels aligned, for one record. */
export function fields(entries: readonly (readonly [string, unknown])[]): string {
  const width = Math.max(...entries.map(([label]) => label.length));
  return entries.map(([label, value]) => `${`${label}:`.padEnd(width + 1)}  ${cell(value)}`).join('\n');
}

/** "3 principals", "1 principal". */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** A positive whole number given on the command line, refused otherwise. */
export function positiveInteger(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError('not a positive whole number.');
  return Number(value);
}

/** Collects a repeatable option into a list. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `key=value` pairs (a repeatable option) as an object. */
export function keyValues(pairs: readonly string[] | undefined, option: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliError(`${option} takes key=value, not ${pair}`);
    result[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return result;
}

/** A JSON value given on the command line. */
export function parseJsonOption(value: string, option: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch (err) {
    throw new CliError(`${option} is not JSON: ${(err as Error).message}`);
  }
}

/** `type:identifier` as the commands take a resource; the identifier may hold colons itself. */
export function parseResource(value: string): { type: string; identifier: string } {
  const at = value.indexOf(':');
  if (at <= 0 || at === value.length - 1) {
    throw new CliError(`a resource is written type:identifier (database:invoices), not ${value}`);
  }
  return { type: value.slice(0, at), identifier: value.slice(at + 1) };
}
