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
  const check = new Ajv({ allErrors: true, strict: true }).compile(schema);
  return names.map((name) => {
    const file = path.relative(projectRoot(), path.join(dir, name));
    let content: unknown;
    try {
      content = parse(readFileSync(path.join(dir, name), 'utf8'));
    } catch (err) {
      throw new Error(`${file} does not parse: ${(err as Error).message}`, { cause: err });
    }
    if (!check(content)) {
      const problems = (check.errors ?? [])
        .slice(0, 5)
        .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`)
        .join('; ');
      throw new Error(`${file} does not fit its schema: ${problems}`);
    }
    return { file, content: content as T };
  });
}
