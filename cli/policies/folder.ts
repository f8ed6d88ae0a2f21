import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { parse } from 'yaml';
import { AppError } from '../../src/errors/errors.js';
import { checkPolicyBody, policyNameKey, type PolicyBody } from '../../src/policies/model.js';
import { PolicyBodySchema } from '../../src/schemas/policies.js';
import { compile, responseAjv, toFieldErrors } from '../../src/schemas/validator.js';

/**
 * A folder of policies as code (docs/policies-as-code.md): one policy per file, named by the
 * policy's name — `<dir>/<name>.yaml`, `.yml` or `.json` — holding the body the API takes on
 * create (`POST /v1/policies`). `name` may be left out, and is then the file's; when given it
 * must be the file's. The tests of the folder live in `<dir>/tests/` (./tests.ts); any other
 * file (a README) and any other folder is not read.
 *
 * Every file is checked here as the service will check it: against the API's own schema of a
 * policy body, then by the rules a policy is refused by at write time (subjects that select
 * nobody, an unknown condition path, a window already closed...). A folder with any problem is
 * refused whole, each problem naming its file, before anything is asked of the service.
 */

/** The extensions of a policy file (and of a test file). */
export const POLICY_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;

/** The folder of tests, inside the folder of policies. */
export const TESTS_FOLDER = 'tests';

/** One policy of the folder. */
export interface FolderPolicy {
  /** The policy's name: its file's name without the extension. */
  name: string;
  /** Its file, as the folder was named (`examples/policies/x.yaml`). */
  file: string;
  /**
   * The body to write: checked, `name` filled in, `status` given (default `active`), the window's
   * bounds in UTC to the millisecond and duplicate resources dropped, as the service stores it.
   */
  body: PolicyBody;
}

export interface PolicyFolder {
  dir: string;
  /** In name order. */
  policies: FolderPolicy[];
}

/** A folder that cannot be used as it is: every problem found, each naming its file. */
export class PolicyFolderError extends Error {
  override readonly name = 'PolicyFolderError';

  constructor(
    readonly dir: string,
    readonly problems: readonly string[],
  ) {
    super(`the policy folder ${dir} cannot be used:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

/** A file's policy body: the API's, except that `name` may be left out (it is the file's). */
const FileBodySchema = Type.Object(
  { ...PolicyBodySchema.properties, name: Type.Optional(PolicyBodySchema.properties.name) },
  { additionalProperties: false },
);
const checkFileBody = compile<Omit<PolicyBody, 'name'> & { name?: string }>(responseAjv, FileBodySchema);

const extensionOf = (file: string): string | undefined =>
  POLICY_EXTENSIONS.find((ext) => file.toLowerCase().endsWith(ext));

/**
 * The policies of `dir`, each checked; throws `PolicyFolderError` listing every problem of every
 * file (a folder is applied whole, so it is judged whole). `now` is when windows are judged.
 */
export function loadPolicyFolder(dir: string, now = Date.now()): PolicyFolder {
  let entries: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new PolicyFolderError(dir, ['it is not a folder']);
    entries = readdirSync(dir).sort();
  } catch (err) {
    if (err instanceof PolicyFolderError) throw err;
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new PolicyFolderError(dir, [
      missing ? 'it does not exist' : `it cannot be read: ${(err as Error).message}`,
    ]);
  }
  const problems: string[] = [];
  const policies: FolderPolicy[] = [];
  const byKey = new Map<string, string>();
  for (const entry of entries) {
    const ext = extensionOf(entry);
    // Hidden files (an editor's swap file) and what is not a policy file are not read.
    if (ext === undefined || entry.startsWith('.')) continue;
    const file = path.join(dir, entry);
    if (!statSync(file).isFile()) continue;
    const name = entry.slice(0, -ext.length);
    // Names are unique whatever their case: two files the service would take for one policy.
    const key = policyNameKey(name);
    const other = byKey.get(key);
    if (other !== undefined) {
      problems.push(`${file}: names the same policy as ${other} (names are unique whatever their case)`);
      continue;
    }
    byKey.set(key, file);
    const loaded = policyFile(file, name, readFileSync(file, 'utf8'), now);
    if (typeof loaded === 'string') problems.push(loaded);
    else policies.push(loaded);
  }
  if (problems.length > 0) throw new PolicyFolderError(dir, problems);
  return { dir, policies };
}

/**
 * One policy file (`file` shown in messages, `name` the name its file gives it): the policy, or
 * what is wrong with it, naming the file.
 */
export function policyFile(
  file: string,
  name: string,
  source: string,
  now = Date.now(),
): FolderPolicy | string {
  let content: unknown;
  try {
    content = parse(source);
  } catch (err) {
    return `${file}: does not parse: ${(err as Error).message.split('\n')[0]}`;
  }
  if (content === null || content === undefined) return `${file}: is empty`;
  if (!checkFileBody(content)) {
    const errors = toFieldErrors(checkFileBody.errors).map((e) => `${e.pointer || '/'} ${e.message}`);
    return `${file}: is not a policy body: ${errors.join('; ')}`;
  }
  if (content.name !== undefined && content.name !== name) {
    return `${file}: name '${content.name}' is not the file's name '${name}' (leave name out, or make the two the same)`;
  }
  // The service keeps a name trimmed: a name with surrounding space would never match its file.
  if (!/\S/.test(name) || name.length > 256 || name !== name.trim()) {
    return `${file}: '${name}' cannot be a policy's name (1-256 characters, not blank, no surrounding space)`;
  }
  try {
    const body = checkPolicyBody({ ...content, name, status: content.status ?? 'active' }, '', now);
    return { name, file, body };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const errors = (err.errors ?? []).map((e) => `${e.pointer || '/'} ${e.message}`);
    return `${file}: the service would refuse it: ${err.message}${errors.length > 0 ? `: ${errors.join('; ')}` : ''}`;
  }
}
