import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { AppError } from '../errors/errors.js';

const MIB = 1024 * 1024;

export function tooLarge(limit: number): AppError {
  const size = limit % MIB === 0 ? `${limit / MIB} MiB` : `${limit} bytes`;
  return new AppError('PAYLOAD_TOO_LARGE', `the request body is larger than ${size}`);
}

/**
 * A request body of text lines, read as it arrives: pieces of about `pieceChars` characters that
 * end at a line break (a line longer than a piece is handed on in parts), UTF-8 decoded across
 * the network's reads. Past `limit` bytes it throws 413 and reads no further. The caller's
 * `for await` is the back-pressure: the socket is not read while a piece is being handled.
 */
export async function* textPieces(
  req: IncomingMessage,
  limit: number,
  pieceChars: number,
): AsyncGenerator<string, void, undefined> {
  const decoder = new StringDecoder('utf8');
  let size = 0;
  let pending = '';
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      pending += decoder.write(chunk);
      while (pending.length >= pieceChars) {
        const newline = pending.lastIndexOf('\n', pieceChars - 1);
        const end = newline >= 0 ? newline + 1 : pending.length;
        yield pending.slice(0, end);
        pending = pending.slice(end);
      }
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    // The client went away (or the socket failed) before the body ended.
    throw new AppError('MALFORMED_JSON', 'the request body ended early');
  }
  pending += decoder.end();
  if (pending !== '') yield pending;
}
