/**
 * `pas decisions get` (one recorded decision) and `pas decisions tail`, which follows the
 * decisions the service records (GET /v1/decisions) as they are made.
 *
 * The list gives each decision once its batch of records is surely written on every instance (a
 * few seconds after it is made: the settle window, docs/api.md §5.4), in the order decisions were
 * made; `tail` polls it with its cursor, so that every decision is shown once and in order.
 */
import { Command, InvalidArgumentError } from 'commander';
import { unwrap, type ResponseData } from '../../clients/typescript/src/index.js';
import { connect } from '../connection.js';
import { note, out, printJson, wantsJson } from '../output.js';
import { sleep, stopOnInterrupt } from '../wait.js';
import { checkSince, pollInterval } from './access-changes.js';
import { resolvePrincipal } from './principals.js';

/** A recorded decision as the list answers it. */
type DecisionRecord = ResponseData<'get', '/v1/decisions'>['data'][number];

/** The largest page of recorded decisions. */
const PAGE = 500;

/** What decided: each reason's code, with the policy that gave it. */
function reasons(record: DecisionRecord): string {
  return record.reasons.map((r) => (r.policy_id ? `${r.code} ${r.policy_id}` : r.code)).join(', ');
}

function decisionLine(record: DecisionRecord): string {
  const onBehalf = record.on_behalf_of?.length ? ` for ${record.on_behalf_of.join(' for ')}` : '';
  const resource = `${record.resource.type}:${record.resource.identifier}`;
  return `${record.evaluated_at}  ${record.decision.padEnd(5)}  ${record.principal_id}${onBehalf}  ${record.action}  ${resource}  ${reasons(record)}  ${record.id}`;
}

function decisionFilter(value: string): 'ALLOW' | 'DENY' {
  const decision = value.toUpperCase();
  if (decision !== 'ALLOW' && decision !== 'DENY') throw new InvalidArgumentError('allow or deny.');
  return decision;
}

interface TailOptions {
  since?: string;
  principal?: string;
  decision?: 'ALLOW' | 'DENY';
  action?: string;
  resourceType?: string;
  interval: number;
  follow: boolean;
}

export function decisionsCommand(): Command {
  const decisions = new Command('decisions').description('recorded decisions');

  decisions
    .command('get')
    .description('show a recorded decision')
    .argument('<id>', 'the dec_ id a decision answered')
    .action(async (id: string, _options: unknown, command: Command) => {
      const client = await connect();
      const record = unwrap(await client.GET('/v1/decisions/{id}', { params: { path: { id } } }));
      if (wantsJson(command)) {
        printJson(record);
        return;
      }
      out(
        `${record.decision}  ${record.principal_id} ${record.action} ${record.resource.type}:${record.resource.identifier}  at ${record.evaluated_at}`,
      );
      for (const reason of record.reasons) {
        out(
          `  ${reason.code}${reason.policy_id ? ` ${reason.policy_id}` : ''}${reason.message ? `: ${reason.message}` : ''}`,
        );
      }
    });

  decisions
    .command('tail')
    .description('follow the decisions the service records, in the order they are made; Ctrl-C stops')
    .option('--since <time>', 'start with the decisions from this RFC 3339 instant (default: from now)')
    .option('--principal <principal>', 'only decisions for this principal (prn_ id, name or email)')
    .option('--decision <decision>', 'only ALLOW or only DENY decisions: allow or deny', decisionFilter)
    .option('--action <action>', 'only decisions on this action')
    .option('--resource-type <type>', 'only decisions on resources of this type')
    .option('--interval <seconds>', 'seconds between polls', pollInterval, 2)
    .option('--no-follow', 'print the decisions recorded so far (with --since) and stop')
    .addHelpText(
      'after',
      '\nEach line: when, ALLOW or DENY, the principal, the action, the resource, the reasons (with the\n' +
        'policy behind each) and the dec_ id (pas decisions get <dec_id>). A decision is listed a few\n' +
        'seconds after it is made, once every instance has surely written it. With --json, one JSON\n' +
        'object per line (a DecisionRecord).',
    )
    .action(async (options: TailOptions, command: Command) => {
      checkSince(options.since);
      const json = wantsJson(command);
      const show = (record: DecisionRecord): void => {
        if (json) out(JSON.stringify(record));
        else out(decisionLine(record));
      };
      // "From now" is this machine's now: the first poll asks for decisions made since.
      const since = options.since ?? new Date().toISOString();
      const client = await connect();
      const filters = {
        ...(options.principal ? { principal_id: await resolvePrincipal(client, options.principal) } : {}),
        ...(options.decision ? { decision: options.decision } : {}),
        ...(options.action ? { action: options.action } : {}),
        ...(options.resourceType ? { resource_type: options.resourceType } : {}),
        limit: PAGE,
      };

      const stop = stopOnInterrupt();
      try {
        if (options.follow) note('following recorded decisions; Ctrl-C stops');
        let cursor: string | undefined;
        while (!stop.signal.aborted) {
          const page = unwrap(
            await client.GET('/v1/decisions', {
              params: { query: { ...filters, ...(cursor ? { cursor } : { since }) } },
            }),
          );
          page.data.forEach(show);
          cursor = page.pagination.next_cursor;
          // More was recorded before the settle point than one page holds: ask again at once.
          if (page.pagination.has_more) continue;
          if (!options.follow) break;
          await sleep(options.interval * 1000, stop.signal);
        }
      } finally {
        stop.dispose();
      }
      // Ctrl-C is how following ends: not a failure.
      process.exitCode = 0;
    });

  return decisions;
}
