/**
 * The questions about access: `pas check` (may this principal do this to that resource?),
 * `pas access` (what can a principal reach?) and `pas who-can` (who can reach a resource?).
 */
import { Command } from 'commander';
import { unwrap, type ResponseData, type Schema } from '../../clients/typescript/src/index.js';
import { connect } from '../connection.js';
import {
  CliError,
  count,
  EXIT,
  out,
  parseJsonOption,
  parseResource,
  positiveInteger,
  printJson,
  table,
  wantsJson,
} from '../output.js';
import { resolvePrincipal } from './principals.js';

type Decision = ResponseData<'post', '/v1/decisions/evaluate'>;
type DecisionRequest = Schema<'DecisionRequest'>;

/** A resource as the tables write it. */
const resourceText = (r: { type: string; identifier: string; pattern?: true }): string =>
  `${r.type}:${r.identifier}${r.pattern ? ' (pattern)' : ''}`;

function reasonText(reason: Schema<'Reason'>): string {
  const policy = reason.policy_id
    ? ` ${reason.policy_id}${reason.policy_version !== undefined ? ` v${reason.policy_version}` : ''}`
    : '';
  return `${reason.code}${policy}${reason.message ? `: ${reason.message}` : ''}`;
}

/** A decision as a person reads it: the verdict, the reasons, and with --explain the why. */
function decisionText(decision: Decision): string {
  const lines = [
    `${decision.decision}  ${decision.principal_id} ${decision.action} ${resourceText(decision.resource)}`,
  ];
  if (decision.on_behalf_of?.length) lines.push(`on behalf of ${decision.on_behalf_of.join(' → ')}`);
  for (const reason of decision.reasons) lines.push(`  ${reasonText(reason)}`);
  const trace = decision.trace;
  if (trace) {
    lines.push('', 'Policies considered:');
    if (trace.candidates.length === 0) lines.push('  none names this resource and action');
    for (const c of trace.candidates) {
      const path = c.subject.path?.map((step) => step.name).join(' → ');
      const subject = c.subject.matched
        ? `selects the principal${c.subject.via ? ` via ${c.subject.via}` : ''}${path ? ` (${path})` : ''}`
        : 'does not select the principal';
      lines.push(`  ${c.applied ? '✓' : '✗'} ${c.name} (${c.policy_id} v${c.policy_version}, ${c.effect})`);
      lines.push(`      ${subject}; ${c.why}`);
      for (const condition of c.conditions) {
        const missing = condition.missing?.length ? ` (missing ${condition.missing.join(', ')})` : '';
        lines.push(`      condition ${condition.path}: ${condition.result}${missing}`);
      }
    }
    for (const link of trace.links ?? []) {
      lines.push(
        `  link ${link.delegator_id} → ${link.delegate_id}: ${link.covered ? 'covered' : 'not covered'}; ${link.why}`,
      );
    }
  }
  if (decision.near_misses?.length) {
    lines.push('', 'Near misses:');
    for (const miss of decision.near_misses) {
      lines.push(
        `  ${miss.policy_name} (${miss.policy_id}): ${miss.failed.kind}: ${miss.failed.detail.message}`,
      );
    }
  }
  if (decision.remedies?.length) {
    lines.push('', 'What would allow it:');
    for (const remedy of decision.remedies) {
      const radius = remedy.blast_radius;
      lines.push(
        `  ${remedy.kind}: ${remedy.message} (also grants ${count(radius.principals, 'other principal')}, ${count(radius.resources, 'other resource')})`,
      );
      for (const step of 'also' in remedy ? (remedy.also ?? []) : [])
        lines.push(`      together with ${step.kind}: ${step.message}`);
    }
  }
  return lines.join('\n');
}

interface CheckOptions {
  explain?: boolean;
  context?: string;
  onBehalfOf?: string;
}

export function checkCommand(): Command {
  return new Command('check')
    .description(
      'decide whether a principal may take an action on a resource (exit 0 ALLOW, 1 DENY, 2 error)',
    )
    .argument('<principal>', 'a prn_ id, or an exact name or email')
    .argument('<action>', 'the action, such as read')
    .argument('<resource>', 'type:identifier, such as database:invoices')
    .option('--explain', 'say why: the policies considered, near misses and what would allow it')
    .option('--context <json>', 'facts about the request, for context.* conditions')
    .option('--on-behalf-of <principal>', 'the principal acts for this one (a prn_ id, name or email)')
    .action(
      async (
        principal: string,
        action: string,
        resource: string,
        options: CheckOptions,
        command: Command,
      ) => {
        const target = parseResource(resource);
        const context = options.context ? parseJsonOption(options.context, '--context') : undefined;
        if (
          context !== undefined &&
          (context === null || typeof context !== 'object' || Array.isArray(context))
        ) {
          throw new CliError('--context must be a JSON object');
        }
        const client = await connect();
        const body: DecisionRequest = {
          principal_id: await resolvePrincipal(client, principal),
          action,
          resource: target,
          ...(options.explain ? { explain: true } : {}),
          ...(context ? { context: context as Record<string, unknown> } : {}),
          ...(options.onBehalfOf ? { on_behalf_of: await resolvePrincipal(client, options.onBehalfOf) } : {}),
        };
        const decision = unwrap(await client.POST('/v1/decisions/evaluate', { body }));
        if (wantsJson(command)) printJson(decision);
        else out(decisionText(decision));
        process.exitCode = decision.allowed ? EXIT.ok : EXIT.deny;
      },
    );
}

export function accessCommand(): Command {
  return new Command('access')
    .description('list what a principal can reach: each resource, the actions and the policies granting them')
    .argument('<principal>', 'a prn_ id, or an exact name or email')
    .option('--type <resource-type>', 'only resources of this type')
    .option('--action <action>', 'only entries granting this action')
    .option('--explain', 'say how each policy reaches the principal')
    .action(
      async (
        principal: string,
        options: { type?: string; action?: string; explain?: boolean },
        command: Command,
      ) => {
        const client = await connect();
        const id = await resolvePrincipal(client, principal);
        const record = unwrap(
          await client.GET('/v1/principals/{id}/access', {
            params: {
              path: { id },
              query: {
                ...(options.type ? { resource_type: options.type } : {}),
                ...(options.action ? { action: options.action } : {}),
                ...(options.explain ? { explain: true } : {}),
              },
            },
          }),
        );
        if (wantsJson(command)) {
          printJson(record);
          return;
        }
        if (record.access.length === 0) {
          out(`${id} can reach nothing${options.type || options.action ? ' of that kind' : ''}.`);
          return;
        }
        const headers = ['RESOURCE', 'ACTIONS', 'GRANTED BY', 'CONDITIONAL', 'EXPIRES'];
        if (options.explain) headers.push('HOW');
        out(
          table(
            headers,
            record.access.map((entry) => {
              const row: unknown[] = [
                resourceText(entry.resource),
                entry.denied_actions?.length
                  ? `${entry.actions.join(', ')} (except ${entry.denied_actions.join(', ')})`
                  : entry.actions,
                entry.granted_by,
                entry.conditional ? 'yes' : 'no',
                entry.expires_at,
              ];
              if (options.explain) {
                row.push(
                  (entry.grants ?? []).map(
                    (g) =>
                      `${g.policy_name} via ${g.via}${g.path ? ` (${g.path.map((s) => s.name).join(' → ')})` : ''}`,
                  ),
                );
              }
              return row;
            }),
          ),
        );
        out(`${count(record.total_resources, 'resource')}`);
      },
    );
}

export function whoCanCommand(): Command {
  return new Command('who-can')
    .description('list the principals that may take an action on a resource')
    .argument('<action>', 'the action, such as read (- for any action)')
    .argument('<resource>', 'type:identifier, such as database:invoices')
    .option('--limit <n>', 'show at most this many principals', positiveInteger)
    .action(async (action: string, resource: string, options: { limit?: number }, command: Command) => {
      const target = parseResource(resource);
      const client = await connect();
      const query = {
        type: target.type,
        identifier: target.identifier,
        ...(action === '-' ? {} : { action }),
      };
      // Every page, the largest the API serves, unless a limit says when to stop.
      const first = unwrap(
        await client.GET('/v1/resources/access', { params: { query: { ...query, limit: 100 } } }),
      );
      const principals = [...first.principals];
      for (let page = 2; page <= first.pagination.pages; page += 1) {
        if (options.limit !== undefined && principals.length >= options.limit) break;
        const next = unwrap(
          await client.GET('/v1/resources/access', { params: { query: { ...query, limit: 100, page } } }),
        );
        principals.push(...next.principals);
      }
      const shown = options.limit === undefined ? principals : principals.slice(0, options.limit);
      const answer = {
        ...first,
        principals: shown,
        pagination: { ...first.pagination, page: 1, per_page: shown.length, pages: shown.length ? 1 : 0 },
      };
      if (wantsJson(command)) {
        printJson(answer);
        return;
      }
      const what = `${action === '-' ? 'reach' : action} ${resourceText(target)}`;
      if (shown.length === 0) {
        out(`No principal may ${what}.`);
        return;
      }
      out(
        table(
          ['PRINCIPAL', 'NAME', 'TYPE', 'ACTIONS', 'GRANTED BY', 'CONDITIONAL', 'EXPIRES'],
          shown.map((entry) => [
            entry.principal.id,
            entry.principal.name,
            entry.principal.type,
            entry.actions,
            entry.granted_by,
            entry.conditional ? 'yes' : 'no',
            entry.expires_at,
          ]),
        ),
      );
      const more = first.pagination.total > shown.length ? ` (${shown.length} shown)` : '';
      out(`${count(first.pagination.total, 'principal')} may ${what}${more}`);
    });
}
