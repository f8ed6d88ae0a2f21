/**
 * `pas login` and `pas logout`: the service URL and API client credentials the other commands
 * use when the environment does not give them.
 */
import { Command } from 'commander';
import { requestToken } from '../../clients/typescript/src/index.js';
import {
  checkUrl,
  configFile,
  ENVIRONMENT,
  readStoredLogin,
  removeStoredLogin,
  storeLogin,
} from '../connection.js';
import { CliError, note, out, printJson, wantsJson } from '../output.js';
import { createPrompter } from '../prompt.js';

interface LoginOptions {
  url?: string;
  clientId?: string;
  clientSecret?: string;
}

const DEFAULT_URL = 'http://localhost:8080';

export function loginCommand(): Command {
  return new Command('login')
    .description(
      'store the service URL and an API client id and secret, after checking them by getting a token',
    )
    .option('--url <url>', 'the service root URL (asked when not given)')
    .option('--client-id <id>', 'the API client id, cli_… (asked when not given)')
    .option(
      '--client-secret <secret>',
      'the client secret (asked when not given; prefer the prompt, which keeps it out of the shell history)',
    )
    .addHelpText(
      'after',
      `\nThe login is stored in ${configFile()} (mode 0600).\n` +
        `${ENVIRONMENT.url}, ${ENVIRONMENT.clientId} and ${ENVIRONMENT.clientSecret} take precedence over it.`,
    )
    .action(async (options: LoginOptions, command: Command) => {
      const stored = await readStoredLogin().catch(() => undefined);
      const prompter = createPrompter();
      let url: string | undefined;
      let clientId: string | undefined;
      let clientSecret: string | undefined;
      try {
        url = options.url ?? (await prompter.ask('Service URL', stored?.url ?? DEFAULT_URL));
        clientId = options.clientId ?? (await prompter.ask('Client id', stored?.client_id));
        clientSecret = options.clientSecret ?? (await prompter.askSecret('Client secret'));
      } finally {
        prompter.close();
      }
      if (!url) throw new CliError('no service URL: give --url');
      if (!clientId) throw new CliError('no client id: give --client-id');
      if (!clientSecret) throw new CliError('no client secret: give --client-secret');
      url = url.replace(/\/+$/, '');
      checkUrl(url, '--url');

      const token = await requestToken({ baseUrl: url, clientId, clientSecret });
      const file = await storeLogin({ url, client_id: clientId, client_secret: clientSecret });
      if (wantsJson(command)) {
        printJson({ url, client_id: clientId, scope: token.scope, config_file: file });
      } else {
        out(`Logged in to ${url} as ${clientId}; stored in ${file}`);
        out(`Scopes: ${token.scope || '(none)'}`);
      }
      const overriding = Object.values(ENVIRONMENT).filter((name) => process.env[name]?.trim());
      if (overriding.length > 0) {
        note(`note: ${overriding.join(', ')} set in the environment take precedence over this login`);
      }
    });
}

export function logoutCommand(): Command {
  return new Command('logout')
    .description('forget the stored login')
    .action(async (_options: unknown, command: Command) => {
      const file = configFile();
      const removed = await removeStoredLogin(file);
      if (wantsJson(command)) printJson({ removed, config_file: file });
      else out(removed ? `Removed ${file}` : `No stored login (${file})`);
    });
}
