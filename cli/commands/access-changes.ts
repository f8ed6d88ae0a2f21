/**
 * `pas access-changes tail`: follows the access history (GET /v1/access-changes,
 * docs/access-history.md), one entry for each principal and resource whose allowed actions a
 * committed change moved, with the policies behind it and the change that caused it. It polls
 * with the list's cursor, so that every change is shown once and in the order it was recorded.
 */
import { Command, InvalidArgumentError } from 'commander';
import { unwrap, type PasClient, type Schema } from '../../clients/typescript/src/index.js';
import { connect } from '../connection.js';
import { CliError, note, out, parseResource, wantsJson } from '../output.js';
import { sleep, stopOnInterrupt } from '../wait.js';
import { resolvePrincipal } from './principals.js';

type AccessChange = Schema<'AccessChange'>;
type AccessChangeList = Schema<'AccessChangeList'>;

/** The largest page of the access history. */
const PAGE = 500;

function changeLine(change: AccessChange): string {
  const actions = [
    ...change.actions_gained.map((a) => `+${a}`),
    ...change.actions_lost.map((a) => `-${a}`),
  ].join(' ');
  const resource = `${change.resource.type}:${change.resource.identifier}${change.resource.pattern ? ' (pattern)' : ''}`;
  const onBehalf = change.on_behalf_of ? ` for ${change.on_behalf_of.name}` : '';
  const via = change.via.length > 0 ? `  via ${change.via.map((v) => v.policy_name).join(', ')}` : '';
  const cause = `${change.cause.event_type} by ${change.cause.actor.type} ${change.cause.actor.id}`;
  return `${change.at}  ${change.principal.name} (${change.principal.id})${onBehalf}  ${actions}  ${resource}${via}  [${cause}]`;
}

/** Seconds between polls, as `--interval` takes them. */
export function pollInterval(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('not a positive number of seconds.');
  return n;
}

/** An RFC 3339 instant given as `--since`, refused before anything is asked of the service. */
export function checkSince(since: string | undefined): void {
  if (since !== undefined && Number.isNaN(Date.parse(since))) {
    throw new CliError(`--since must be an RFC 3339 instant, such as 2026-01-31T09:00:00Z, not ${since}`);
  }
}

interface TailOptions {
  since?: string;
  principal?: string;
  resource?: string;
  action?: string;
  interval: number;
  follow: boolean;
}

type Filters = {
  principal_id?: string;
  resource_type?: string;
  identifier?: string;
  action?: string;
};

/**
 * Where following starts: after the newest change recorded now (two requests: how many pages
 * there are, then the last page's cursor), or, with `since`, at that instant.
 */
async function start(
  client: PasClient,
  filters: Filters,
  since: string | undefined,
): Promise<{ backlog: AccessChange[]; cursor: string | null }> {
  const page = async (query: { page?: number; since?: string }): Promise<AccessChangeList> =>
    unwrap(
      await client.GET('/v1/access-changes', { params: { query: { ...filters, ...query, limit: PAGE } } }),
    );
  if (since !== undefined) {
    const first = await page({ since });
    return { backlog: first.data, cursor: first.pagination.next_cursor };
  }
  const first = await page({});
  if (first.pagination.pages <= 1) return { backlog: [], cursor: first.pagination.next_cursor };
  const last = await page({ page: first.pagination.pages });
  return { backlog: [], cursor: last.pagination.next_cursor };
}

export function accessChangesCommand(): Command {
  const changes = new Command('access-changes').description(
    'the access history: changes to who can reach what, and why',
  );

  changes
    .command('tail')
    .description('follow the access history: who gained or lost which actions on what, and why; Ctrl-C stops')
    .option('--since <time>', 'start with the changes from this RFC 3339 instant (default: only new ones)')
    .option('--principal <principal>', 'only changes to this principal (prn_ id, name or email)')
    .option('--resource <resource>', 'only changes to this resource, type:identifier (or a type alone)')
    .option('--action <action>', 'only changes gaining or losing this action')
    .option('--interval <seconds>', 'seconds between polls', pollInterval, 2)
    .option('--no-follow', 'print the changes recorded so far (with --since) and stop')
    .addHelpText('after', '\nWith --json, one JSON object per line (an AccessChange).')
    .action(async (options: TailOptions, command: Command) => {
      checkSince(options.since);
      const json = wantsJson(command);
      const show = (change: AccessChange): void => {
        if (json) out(JSON.stringify(change));
        else out(changeLine(change));
      };
      const client = await connect();
      const filters: Filters = {};
      if (options.principal) filters.principal_id = await resolvePrincipal(client, options.principal);
      if (options.resource) {
        if (options.resource.includes(':')) {
          const resource = parseResource(options.resource);
          filters.resource_type = resource.type;
          filters.identifier = resource.identifier;
        } else {
          filters.resource_type = options.resource;
        }
      }
      if (options.action) filters.action = options.action;

      const stop = stopOnInterrupt();
      try {
        const begun = await start(client, filters, options.since);
        const backlog = begun.backlog;
        let cursor = begun.cursor;
        if (options.follow) note('following the access history; Ctrl-C stops');
        backlog.forEach(show);
        let caughtUp = backlog.length < PAGE;
        while (!stop.signal.aborted) {
          if (caughtUp) {
            if (!options.follow) break;
            await sleep(options.interval * 1000, stop.signal);
            if (stop.signal.aborted) break;
          }
          // Without a cursor (nothing was recorded yet when following began) every change is new.
          const query = cursor ? { cursor } : { page: 1 };
          const next = unwrap(
            await client.GET('/v1/access-changes', {
              params: { query: { ...filters, ...query, limit: PAGE } },
            }),
          );
          next.data.forEach(show);
          cursor = next.pagination.next_cursor ?? cursor;
          caughtUp = next.data.length < PAGE;
        }
      } finally {
        stop.dispose();
      }
      // Ctrl-C is how following ends: not a failure.
      process.exitCode = 0;
    });

  return changes;
}
