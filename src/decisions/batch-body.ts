import { parseJsonBody, utf8Text } from '../json.js';
import { BatchBodySchema, type DecisionRequest } from '../schemas/decisions.js';
import { compile, inputAjv, invalidBody, type Validator } from '../schemas/validator.js';

/** Compiled on first use: a decision thread that never reads a batch's body never compiles it. */
let check: Validator<{ requests: DecisionRequest[] }> | undefined;

/**
 * The requests of a batch's body (`POST /v1/decisions/batch`, docs/api.md §5.2), read and checked
 * exactly as the HTTP edge reads and checks any other JSON body: `MALFORMED_JSON` for text that is
 * not JSON, `VALIDATION_FAILED` naming each field wrong. Runs on a decision thread for a batch
 * of many requests, on the event loop for a few.
 */
export function readBatchBody(bytes: Uint8Array): DecisionRequest[] {
  const body = parseJsonBody(utf8Text(bytes));
  check ??= compile(inputAjv, BatchBodySchema);
  if (!check(body)) throw invalidBody(check);
  return body.requests;
}
