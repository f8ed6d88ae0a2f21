import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type AnySchema } from 'ajv';
import { parse } from 'yaml';
import { projectRoot } from '../../src/paths.js';

/** One case file: its path from the project root, and what it holds once checked. */
export interface CaseFile<T> {
  file: string;
  content: T;
}

// One instance for every load: it keeps each schema compiled once.
const ajv = new Ajv({ allErrors: true, strict: true });

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

/** The text of one case file (named `file` in errors), parsed and checked against `schema`. */
export function caseFile<T>(file: string, source: string, schema: AnySchema): CaseFile<T> {
  const check = ajv.compile(schema);
  let content: unknown;
  try {
    content = parse(source);
  } catch (err) {
    throw new Error(`${file} does not parse: ${(err as Error).message}`, { cause: err });
  }
  if (!check(content)) {
    const problems = (check.errors ?? [])
      .slice(0, 5)
      // An unknown key is named, so that a misspelt one is found at once.
      .map((e) => {
        const extra =
          e.keyword === 'additionalProperties' ? ` ('${String(e.params['additionalProperty'])}')` : '';
        return `${e.instancePath || '/'} ${e.message ?? ''}${extra}`;
      })
      .join('; ');
    throw new Error(`${file} does not fit its schema: ${problems}`);
  }
  return { file, content: content as T };
}
