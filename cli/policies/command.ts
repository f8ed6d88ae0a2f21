/**
 * `pas policies`: a folder of policies as code (docs/policies-as-code.md). `plan` shows what the
 * folder would change on the service and who would gain or lose access, `apply` makes those
 * changes as planned, `test` decides the folder's test cases on the engine in memory (or, with
 * `--live`, on the service).
 *
 * Exit codes: 0 on success; 1 when `test` has a failing case, or when `apply` made nothing (or
 * not everything) because the live policies changed since the plan or the answer was no; 2 on
 * any error (a folder that cannot be used, a refused request, no terminal to confirm on).
 */
import { Command } from 'commander';
import type { PasClient } from '../../clients/typescript/src/index.js';
import { CliError, EXIT, note, out } from '../output.js';
import { createPrompter } from '../prompt.js';
import { policyApi, type PolicyApi } from './api.js';
import { applyPlan, applyText } from './apply.js';
import { loadPolicyFolder, PolicyFolderError, type PolicyFolder } from './folder.js';
import { makePlan, planJson, planText } from './plan.js';
import { loadFolderTests, resultsText, runInMemory, runLive } from './tests.js';

/** How the commands meet the person running them; the process's streams unless a test says. */
export interface PoliciesIo {
  /** Writes the command's answer (stdout). */
  out: (text: string) => void;
  /** Writes a message beside it (stderr). */
  note: (text: string) => void;
  /** Whether there is a person to ask (a terminal on standard input). */
  interactive: () => boolean;
  /** Asks a yes/no question; true only for yes. */
  confirm: (question: string) => Promise<boolean>;
  /** The code the command ends with, when it ends without an error. */
  exit: (code: number) => void;
}

const processIo: PoliciesIo = {
  out,
  note,
  interactive: () => process.stdin.isTTY === true,
  async confirm(question) {
    const prompter = createPrompter();
    try {
      const answer = await prompter.ask(`${question} (yes/no)`, 'no');
      return /^y(es)?$/i.test(answer ?? '');
    } finally {
      prompter.close();
    }
  },
  exit(code) {
    process.exitCode = code;
  },
};

/** `apply` made nothing, or not everything: the answer was no, or the live policies moved. */
const NOT_APPLIED = 1;
/** `test` ran, and a case's answer was not the one expected. */
const CASES_FAILED = 1;

interface PlanFlags {
  prune?: boolean;
  only?: string;
  json?: boolean;
}

/** The folder, or a usage failure naming every problem of it. */
function folderAt(dir: string): PolicyFolder {
  try {
    return loadPolicyFolder(dir);
  } catch (err) {
    if (err instanceof PolicyFolderError) throw new CliError(err.message);
    throw err;
  }
}

const planOptions = (flags: PlanFlags) => ({
  ...(flags.prune ? { prune: true } : {}),
  ...(flags.only !== undefined ? { only: flags.only } : {}),
});

export function policiesCommand(connect: () => Promise<PasClient>, io: PoliciesIo = processIo): Command {
  const api = async (): Promise<PolicyApi> => policyApi(await connect());
  const printJson = (value: unknown): void => io.out(JSON.stringify(value, null, 2));
  const policies = new Command('policies').description(
    'Policies as code: plan, apply and test a folder of policy files (docs/policies-as-code.md)',
  );

  policies
    .command('plan')
    .description('Show what the folder would change on the service, with each change’s blast radius')
    .argument('<dir>', 'the folder of policy files')
    .option('--prune', 'also delete live policies the folder does not hold')
    .option('--only <name>', 'only the policy of this name')
    .option('--json', 'print the changes as JSON ([] when nothing differs)')
    .action(async (dir: string, _flags: PlanFlags, command: Command) => {
      const flags = command.optsWithGlobals<PlanFlags>();
      const folder = folderAt(dir);
      const plan = await makePlan(folder, await api(), planOptions(flags));
      if (flags.json) printJson(planJson(plan));
      else io.out(planText(plan));
    });

  policies
    .command('apply')
    .description('Apply the folder’s plan, as planned (If-Match), after confirmation')
    .argument('<dir>', 'the folder of policy files')
    .option('--prune', 'also delete live policies the folder does not hold')
    .option('--only <name>', 'only the policy of this name')
    .option('--yes', 'apply without asking (needed where there is no terminal)')
    .option('--json', 'print the plan and what was applied as JSON')
    .action(async (dir: string, _flags: PlanFlags & { yes?: boolean }, command: Command) => {
      const flags = command.optsWithGlobals<PlanFlags & { yes?: boolean }>();
      const folder = folderAt(dir);
      const service = await api();
      const plan = await makePlan(folder, service, planOptions(flags));
      // The plan goes to stderr under --json, so that stdout holds the one JSON document.
      (flags.json ? io.note : io.out)(planText(plan));
      if (plan.changes.length === 0) {
        if (flags.json) printJson({ plan: [], applied: [] });
        return;
      }
      if (!flags.yes) {
        if (!io.interactive()) {
          throw new CliError(
            'not applied: there is no terminal to confirm on; run with --yes to apply without asking',
          );
        }
        const these = plan.changes.length === 1 ? 'this change' : `these ${plan.changes.length} changes`;
        if (!(await io.confirm(`Apply ${these} to the service?`))) {
          io.note('not applied.');
          io.exit(NOT_APPLIED);
          return;
        }
      }
      const result = await applyPlan(plan, service);
      if (flags.json) {
        const stopped = result.stopped ? { stopped: result.stopped } : {};
        printJson({ plan: planJson(plan), applied: result.applied, ...stopped });
      }
      (result.stopped || flags.json ? io.note : io.out)(applyText(result, plan.changes.length));
      if (result.stopped) io.exit(result.stopped.reason === 'stale' ? NOT_APPLIED : EXIT.error);
    });

  policies
    .command('test')
    .description(
      'Decide the folder’s test cases (tests/*.yaml) on the engine in memory, or with --live on the service',
    )
    .argument('<dir>', 'the folder of policy files')
    .option('--live', 'decide on the live service (the ids of the tests are live ids)')
    .option('--json', 'print each case’s outcome as JSON')
    .action(async (dir: string, _flags: { live?: boolean; json?: boolean }, command: Command) => {
      const flags = command.optsWithGlobals<{ live?: boolean; json?: boolean }>();
      const folder = folderAt(dir);
      let suites;
      try {
        suites = loadFolderTests(folder);
      } catch (err) {
        throw new CliError((err as Error).message);
      }
      let results;
      if (flags.live) {
        const run = await runLive(folder, suites, await api());
        if (run.drift.length > 0) {
          io.note(
            `note: the live policies differ from the folder (${run.drift.map((c) => `${c.action} ${c.name}`).join(', ')}); the cases are decided by the live ones`,
          );
        }
        results = run.results;
      } else {
        results = runInMemory(suites);
      }
      if (flags.json) printJson(results);
      else io.out(resultsText(results));
      if (results.some((r) => r.outcome === 'fail')) io.exit(CASES_FAILED);
    });

  return policies;
}
