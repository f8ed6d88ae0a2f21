/**
 * `pas`, the command line of the Principals and Access Service (docs/cli.md). bin/pas.js runs
 * it; each command lives in its own module under cli/commands.
 *
 * Exit codes: 0 on success (and on ALLOW for `pas check`), 1 on DENY for `pas check`, 2 on any
 * error: a usage error, a refused request (whose problem details are shown), an unreachable
 * service. 130 when an interrupt stopped a wait.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { PasApiError } from '../clients/typescript/src/index.js';
import { loginCommand, logoutCommand } from './commands/login.js';
import { principalsCommand } from './commands/principals.js';
import { accessCommand, checkCommand, whoCanCommand } from './commands/decide.js';
import { connectorsCommand } from './commands/connectors.js';
import { reportsCommand } from './commands/reports.js';
import { decisionsCommand } from './commands/decisions.js';
import { accessChangesCommand } from './commands/access-changes.js';
import { connect } from './connection.js';
import { policiesCommand } from './policies/command.js';
import { CliError, EXIT, note } from './output.js';

/** The version of the project the command line comes with. */
function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return manifest.version ?? 'unknown';
}

export function program(): Command {
  const pas = new Command('pas')
    .description('Command line of the Principals and Access Service')
    .version(version(), '-V, --version')
    .option('--json', 'write machine-readable JSON on stdout instead of tables')
    .addHelpText(
      'after',
      '\nThe service and credentials come from PAS_URL, PAS_CLIENT_ID and PAS_CLIENT_SECRET, else from\n' +
        '`pas login`. Exit codes: 0 success (ALLOW for check), 1 DENY (check), 2 error. See docs/cli.md.',
    );
  for (const command of [
    loginCommand(),
    logoutCommand(),
    principalsCommand(),
    checkCommand(),
    accessCommand(),
    whoCanCommand(),
    connectorsCommand(),
    reportsCommand(),
    decisionsCommand(),
    accessChangesCommand(),
    policiesCommand(connect),
  ]) {
    pas.addCommand(command);
  }
  // Usage errors end with exit code 2 like every other failure (commander would use 1, which
  // `pas check` gives to DENY), and each command's help lists --json, which it accepts too.
  const configure = (command: Command, path: string): void => {
    command.exitOverride();
    command.configureHelp({ showGlobalOptions: true });
    command.showHelpAfterError(`(run \`${path} --help\` for usage)`);
    for (const sub of command.commands) configure(sub, `${path} ${sub.name()}`);
  };
  configure(pas, 'pas');
  return pas;
}

/** A failure as one or more lines for stderr. */
export function describeFailure(err: unknown): string {
  if (err instanceof PasApiError || err instanceof CliError) return err.message;
  if (err instanceof TypeError && err.message === 'fetch failed') {
    // Node's fetch hides why in `cause`: a refused connection, a name that does not resolve.
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return `cannot reach the service: ${cause?.code ?? cause?.message ?? 'the connection failed'}`;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Runs the command line; answers the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    await program().parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and the version end with code 0; commander has already written its message.
      return err.exitCode === 0 ? EXIT.ok : EXIT.error;
    }
    note(`pas: ${describeFailure(err)}`);
    return err instanceof CliError ? err.exitCode : EXIT.error;
  }
}
