/**
 * Questions asked on the terminal (or read from piped standard input, a line per question), the
 * prompts written to stderr so that stdout stays the command's answer alone.
 */
import { createInterface, type Interface } from 'node:readline';
import { Writable } from 'node:stream';

export interface Prompter {
  /** Asks a question; `fallback` is answered for an empty line. Undefined once input has ended. */
  ask(question: string, fallback?: string): Promise<string | undefined>;
  /** Asks without echoing what is typed (on a terminal). */
  askSecret(question: string): Promise<string | undefined>;
  close(): void;
}

export function createPrompter(
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Prompter {
  let muted = false;
  // What readline echoes goes through here, so that a secret's characters can be held back.
  const echo = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      if (!muted) output.write(chunk);
      done();
    },
  });
  const terminal = input.isTTY === true;
  const lines: Interface = createInterface({ input, output: echo, terminal });
  // Lines are taken one at a time from the iterator, which keeps those that arrive before they are
  // asked for (all of them at once, when standard input is a pipe).
  const iterator = lines[Symbol.asyncIterator]();
  const next = async (): Promise<string | undefined> => {
    const line = await iterator.next();
    return line.done ? undefined : line.value;
  };
  return {
    async ask(question, fallback) {
      output.write(fallback ? `${question} [${fallback}]: ` : `${question}: `);
      const answer = (await next())?.trim();
      if (answer === undefined) return fallback;
      return answer || fallback;
    },
    async askSecret(question) {
      output.write(`${question}: `);
      muted = true;
      try {
        return (await next())?.trim();
      } finally {
        muted = false;
        if (terminal) output.write('\n');
      }
    },
    close() {
      lines.close();
    },
  };
}
