import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AnySchema } from 'ajv';
import { projectRoot } from '../../src/paths.js';
import { caseFile, type CaseFile } from '../../src/policy-cases/load.js';

// Parsing and checking one file is shared with the tests of a folder of policies.
export { caseFile, type CaseFile };

/**
 * The case files of `test/cases/<folder>` (every `*.yaml`, in name order), each parsed and checked
 * against `schema`. A file that does not parse or does not fit the schema fails the load with its
 * path and the first problems, so a typo in a case never turns into a case that passes unread.
 */
export function loadCases<T>(folder: string, schema: AnySchema): CaseFile<T>[] {
  const dir = path.join(projectRoot(), 'test', 'cases', folder);
  const names = readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort();
  if (names.length === 0) throw new Error(`no case files in ${dir}`);
  return names.map((name) =>
    caseFile<T>(
      path.relative(projectRoot(), path.join(dir, name)),
      readFileSync(path.join(dir, name), 'utf8'),
      schema,
    ),
  );
}
