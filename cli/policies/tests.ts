import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { decide } from '../../src/decisions/engine.js';
import { answerProblem, expectedReasons, shownReason, type Answer } from '../../src/policy-cases/answers.js';
import {
  suiteFileSchema,
  worldFileSchema,
  type EngineCase,
  type EngineSuite,
  type PolicySpec,
  type SuiteFile,
  type WorldFile,
} from '../../src/policy-cases/format.js';
import { caseFile, engineSuite } from '../../src/policy-cases/load.js';
import { buildIndex, requestOf } from '../../src/policy-cases/world.js';
import type { DecisionRequestInput, PolicyApi } from './api.js';
import { diffPolicies, type Change } from './diff.js';
import { POLICY_EXTENSIONS, TESTS_FOLDER, type FolderPolicy, type PolicyFolder } from './folder.js';

/**
 * The tests of a folder of policies: `<dir>/tests/*.yaml` (or `.yml`, `.json`), each a file of
 * policy cases in the format of the engine's own (test/cases/engine/README.md) — principals,
 * groups, registered resources and delegations, then cases and tables — whose policies are the
 * folder's: a case names a policy by its name (`POLICY_ALLOW finance-reads-invoices`). A file may
 * name a shared world of `<dir>/tests/worlds/`.
 *
 * The cases are decided by the decision engine in memory, on an index built from the folder's
 * policies and the files' worlds (src/policy-cases), with no service at all; or, with `--live`,
 * by the live service, whose principals, groups, resources and delegations must then be those the
 * files describe (their ids are the live ids), and whose policies are the ones decided by.
 */

/** The folder of shared worlds, inside the folder of tests. */
export const WORLDS_FOLDER = 'worlds';

/** The folder's tests, or an error listing what is wrong with them, each problem naming its file. */
export function loadFolderTests(folder: PolicyFolder, now = Date.now()): EngineSuite[] {
  const dir = path.join(folder.dir, TESTS_FOLDER);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new Error(`${folder.dir} has no tests: put them in ${dir}/ (docs/policies-as-code.md)`);
  }
  const problems: string[] = [];
  const worlds = new Map<string, WorldFile>();
  for (const file of filesOf(path.join(dir, WORLDS_FOLDER))) {
    try {
      const { content } = caseFile<WorldFile>(file, readFileSync(file, 'utf8'), worldFileSchema);
      if (content.policies) throw new Error(holdsPolicies(file, folder));
      worlds.set(baseName(file), content);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  const policies = folder.policies.map(policySpec);
  const suites: EngineSuite[] = [];
  const files = filesOf(dir);
  if (files.length === 0) problems.push(`${dir} holds no test files (*.yaml, *.yml, *.json)`);
  for (const file of files) {
    try {
      const { content } = caseFile<SuiteFile>(file, readFileSync(file, 'utf8'), suiteFileSchema);
      if (content.policies) throw new Error(holdsPolicies(file, folder));
      suites.push(engineSuite(file, content, worlds, now, policies));
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (problems.length > 0)
    throw new Error(`the tests of ${folder.dir} cannot be run:\n  ${problems.join('\n  ')}`);
  return suites;
}

const holdsPolicies = (file: string, folder: PolicyFolder): string =>
  `${file}: holds policies, but the policies tested are the folder's own (${folder.dir}/<name>.yaml); write them there`;

/** The files of a folder a test may be written in, in name order; none when there is no folder. */
function filesOf(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter(
      (name) => !name.startsWith('.') && POLICY_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext)),
    )
    .sort()
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).isFile());
}

const baseName = (file: string): string => path.basename(file).replace(/\.[^.]+$/, '');

/** A policy of the folder as a policy of a world: its name is its id, as the cases name it. */
export function policySpec(policy: FolderPolicy): PolicySpec {
  const { body } = policy;
  return {
    id: policy.name,
    effect: body.effect,
    ...(body.subjects.principals ? { principals: body.subjects.principals } : {}),
    ...(body.subjects.groups ? { groups: body.subjects.groups } : {}),
    ...(body.subjects.match ? { match: body.subjects.match } : {}),
    actions: body.actions,
    resources: body.resources.map((r) => `${r.type}:${r.identifier}`),
    ...(body.conditions ? { conditions: body.conditions } : {}),
    ...(body.status ? { status: body.status } : {}),
    ...(body.valid_from ? { valid_from: body.valid_from } : {}),
    ...(body.valid_until ? { valid_until: body.valid_until } : {}),
  };
}

/** How one case went. */
export interface CaseResult {
  file: string;
  rule: string;
  name: string;
  outcome: 'pass' | 'fail' | 'skip';
  /** Why the case is skipped. */
  skip?: string;
  expected: { allowed: boolean; reasons: string[] };
  got?: { allowed: boolean; reasons: string[] };
  /** What is wrong with the answer (a failure). */
  problem?: string;
}

function result(suite: EngineSuite, c: EngineCase, answer: Answer): CaseResult {
  const got = answer.reasons.map(shownReason);
  const problem = answerProblem(c, answer);
  return {
    file: suite.file,
    rule: suite.rule,
    name: c.name,
    outcome: problem === undefined ? 'pass' : 'fail',
    expected: { allowed: c.allowed, reasons: expectedReasons(c, got) },
    got: { allowed: answer.allowed, reasons: [...got].sort() },
    ...(problem === undefined ? {} : { problem }),
  };
}

function skipped(suite: EngineSuite, c: EngineCase): CaseResult {
  return {
    file: suite.file,
    rule: suite.rule,
    name: c.name,
    outcome: 'skip',
    skip: c.skip!,
    expected: { allowed: c.allowed, reasons: [...c.reasons].sort() },
  };
}

/** Every case decided by the engine in memory, each file on an index of its own world. */
export function runInMemory(suites: readonly EngineSuite[], now = Date.now()): CaseResult[] {
  const out: CaseResult[] = [];
  for (const suite of suites) {
    const index = buildIndex(suite.world, now);
    for (const c of suite.cases) {
      out.push(c.skip ? skipped(suite, c) : result(suite, c, decide(index, requestOf(c))));
    }
  }
  return out;
}

export interface LiveRun {
  results: CaseResult[];
  /** How the live policies differ from the folder's (the cases are decided by the live ones). */
  drift: Change[];
}

/**
 * Every case decided by the live service (`POST /v1/decisions/batch`): the principals, groups,
 * resources and delegations the files describe must exist there under the same ids. The policies
 * the answers name are shown by their names, as the cases write them.
 */
export async function runLive(
  folder: PolicyFolder,
  suites: readonly EngineSuite[],
  api: PolicyApi,
): Promise<LiveRun> {
  const live = await api.list();
  const names = new Map(live.map((p) => [p.id, p.name]));
  const drift = diffPolicies(folder.policies, live);
  const asked = suites.flatMap((suite) => suite.cases.filter((c) => !c.skip).map((c) => ({ suite, c })));
  // The engine's request and the API's are the same shape; the case file was checked against
  // a schema of its own, which the service checks again.
  const answers = await api.decide(asked.map(({ c }) => requestOf(c) as DecisionRequestInput));
  const byCase = new Map(
    asked.map(({ c }, i) => {
      const answer = answers[i]!;
      const reasons = answer.reasons.map((r) => ({
        ...r,
        ...(r.policy_id === undefined ? {} : { policy_id: names.get(r.policy_id) ?? r.policy_id }),
      }));
      return [c, { allowed: answer.allowed, reasons }];
    }),
  );
  const results = suites.flatMap((suite) =>
    suite.cases.map((c) => (c.skip ? skipped(suite, c) : result(suite, c, byCase.get(c)!))),
  );
  return { results, drift };
}

const verdict = (v: { allowed: boolean; reasons: string[] }): string =>
  `${v.allowed ? 'ALLOW' : 'DENY'} [${v.reasons.join(', ')}]`;

/** The results as text: a line per case, each failure with what was expected and what came. */
export function resultsText(results: readonly CaseResult[]): string {
  const lines: string[] = [];
  let file: string | undefined;
  for (const r of results) {
    if (r.file !== file) {
      file = r.file;
      lines.push(`${r.file}: ${r.rule}`);
    }
    if (r.outcome === 'pass') lines.push(`  ok    ${r.name}`);
    else if (r.outcome === 'skip') lines.push(`  skip  ${r.name} (${r.skip})`);
    else {
      lines.push(`  FAIL  ${r.name}`);
      lines.push(`          expected: ${verdict(r.expected)}`);
      lines.push(`          got:      ${verdict(r.got!)}`);
    }
  }
  const count = (o: CaseResult['outcome']): number => results.filter((r) => r.outcome === o).length;
  lines.push('', `${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped`);
  return `${lines.join('\n')}\n`;
}
