import path from 'node:path';
import { engineSuite } from '../../src/policy-cases/load.js';
import {
  suiteFileSchema,
  worldFileSchema,
  type EngineSuite,
  type SuiteFile,
  type WorldFile,
} from '../../src/policy-cases/format.js';
import { loadCases } from './cases.js';

/**
 * The decision engine's cases as data: `test/cases/engine/*.yaml`, one file per rule of
 * docs/policies.md, each a world (principals, nested groups, registered resources, policies,
 * delegations) and requests with the decision and the exact reasons expected. A file may name a
 * shared world of `test/cases/engine/worlds/` that its own entries are added to. The format is
 * described in test/cases/engine/README.md. Checking a file against it, expanding its tables and
 * building the index a world stands for live in src/policy-cases, which `pas policies test` runs
 * a folder's tests through too; this module finds the engine's own files. The engine test and
 * `npm run bench:decisions` both run the cases through it, so what is measured is what is tested.
 */

export * from '../../src/policy-cases/format.js';
export { engineSuite, resolveTime } from '../../src/policy-cases/load.js';
export { buildIndex, ixPrincipalOf, requestOf, storedPolicy } from '../../src/policy-cases/world.js';
export { answerProblem, expectedReasons, shownReason } from '../../src/policy-cases/answers.js';

/**
 * Every file of `test/cases/engine/`, checked against the format, its times resolved against
 * `now` and its tables expanded (see `engineSuite`).
 */
export function loadEngineSuites(now = Date.now()): EngineSuite[] {
  const worlds = new Map(
    loadCases<WorldFile>(path.join('engine', 'worlds'), worldFileSchema).map((f) => [
      path.basename(f.file, '.yaml'),
      f.content,
    ]),
  );
  return loadCases<SuiteFile>('engine', suiteFileSchema).map(({ file, content }) =>
    engineSuite(file, content, worlds, now),
  );
}
