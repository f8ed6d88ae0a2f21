import { serveReplica } from '../decisions/replica-thread.js';
import { watchBatch } from './compute.js';
import type { ReadyPart } from './repository.js';

/**
 * A decision thread (src/decisions/decision-thread.ts) that also computes the access changes of
 * the batches it is sent with their causes, over its replica of the index: the access before and
 * after each batch is read there, not on the event loop, and the parts go back as bytes, moved,
 * a few thousand changes at a time as they are made.
 */
serveReplica({
  async before(index, work, causes, at) {
    const after = await watchBatch(index, work, causes, at);
    const moved = (parts: ReadyPart[]) => ({
      result: parts,
      transfer: parts.map((p) => p.json.buffer as ArrayBuffer),
    });
    return async (handOn) => moved(await after((parts) => handOn(moved(parts))));
  },
});
