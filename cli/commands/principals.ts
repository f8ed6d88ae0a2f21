/**
 * `pas principals ls|get|search`, and how every command finds the principal it is given: by its
 * `prn_` id, else by its exact name or email.
 */
import { Command, Option } from 'commander';
import { unwrap, type PasClient, type Schema } from '../../clients/typescript/src/index.js';
import { connect } from '../connection.js';
import {
  CliError,
  collect,
  count,
  fields,
  keyValues,
  out,
  parseJsonOption,
  positiveInteger,
  printJson,
  table,
  wantsJson,
} from '../output.js';

type PrincipalType = Schema<'PrincipalType'>;
type PrincipalStatus = Schema<'PrincipalStatus'>;
type SearchQuery = Schema<'SearchQuery'>;
type PrincipalList = Schema<'PrincipalList'>;

const TYPES: PrincipalType[] = ['USER', 'SERVICE_ACCOUNT', 'API_KEY', 'AI_AGENT'];
const STATUSES: PrincipalStatus[] = ['active', 'suspended', 'deprovisioned', 'deleted'];
const SORT_FIELDS = ['created_at', 'updated_at', 'name', 'last_login', 'risk_score'] as const;
/** The largest page the API serves. */
const MAX_LIMIT = 100;

/**
 * The id of the principal a command names: a `prn_` id as it is, else the one principal whose
 * name (or, with an `@`, email) is exactly the text given.
 */
export async function resolvePrincipal(client: PasClient, reference: string): Promise<string> {
  if (/^prn_/.test(reference)) return reference;
  const byEmail = reference.includes('@');
  const query: SearchQuery = byEmail ? { email: reference } : { name: reference };
  const found = unwrap(await client.POST('/v1/principals/search', { body: { query, limit: 10 } }));
  const exact = found.data.filter((p) => (byEmail ? p.email === reference : p.name === reference));
  const matches = exact.length > 0 ? exact : found.data;
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) {
    throw new CliError(`no principal ${byEmail ? 'has the email' : 'is named'} ${reference}`);
  }
  throw new CliError(
    `${count(matches.length, 'principal')} ${byEmail ? 'have the email' : 'are named'} ${reference}: ` +
      `give the id (${matches.map((p) => p.id).join(', ')})`,
  );
}

function listTable(list: PrincipalList): string {
  return table(
    ['ID', 'TYPE', 'NAME', 'EMAIL', 'STATUS', 'RISK', 'SOURCE', 'CREATED'],
    list.data.map((p) => [
      p.id,
      p.type,
      p.name,
      p.email,
      p.status,
      p.risk_score,
      p.connector_source,
      p.created_at,
    ]),
  );
}

function pageSummary(list: PrincipalList): string {
  const { total, page, pages } = list.pagination;
  if (total === 0) return 'No principals.';
  return `${count(total, 'principal')}, page ${page} of ${pages}`;
}

function printList(list: PrincipalList, command: Command): void {
  if (wantsJson(command)) {
    printJson(list);
    return;
  }
  if (list.data.length > 0) out(listTable(list));
  out(pageSummary(list));
}

interface ListOptions {
  type?: PrincipalType;
  status?: PrincipalStatus;
  source?: string;
  page?: number;
  limit?: number;
  all?: boolean;
}

/**
 * Every page of a list, one request a page of the largest size, gathered into one answer whose
 * pagination says it holds them all.
 */
async function allPages(fetchPage: (page: number) => Promise<PrincipalList>): Promise<PrincipalList> {
  const first = await fetchPage(1);
  const data = [...first.data];
  for (let page = 2; page <= first.pagination.pages; page += 1) data.push(...(await fetchPage(page)).data);
  return {
    data,
    pagination: { total: first.pagination.total, page: 1, per_page: data.length, pages: data.length ? 1 : 0 },
  };
}

function typeOption(): Option {
  return new Option('--type <type>', 'only principals of this type').choices(TYPES);
}

function statusOption(what: string): Option {
  return new Option('--status <status>', what).choices(STATUSES);
}

function pagingOptions(command: Command): Command {
  return command
    .option('--page <n>', 'the page to show, from 1', positiveInteger)
    .option('--limit <n>', `principals a page, 1–${MAX_LIMIT} (default 50)`, positiveInteger)
    .option('--all', 'every page');
}

export function principalsCommand(): Command {
  const principals = new Command('principals').description('list, show and search principals');

  pagingOptions(
    principals
      .command('ls')
      .alias('list')
      .description('list principals, newest first')
      .addOption(typeOption())
      .addOption(statusOption('only principals with this status (default: all but deleted)'))
      .option('--source <connector>', 'only principals this connector provisioned'),
  ).action(async (options: ListOptions, command: Command) => {
    const client = await connect();
    const query = {
      ...(options.type ? { type: options.type } : {}),
      ...(options.status ? { status: options.status } : {}),
      ...(options.source ? { connector_source: options.source } : {}),
    };
    const fetchPage = async (page: number, limit?: number): Promise<PrincipalList> =>
      unwrap(
        await client.GET('/v1/principals', {
          params: { query: { ...query, page, ...(limit ? { limit } : {}) } },
        }),
      );
    const list = options.all
      ? await allPages((page) => fetchPage(page, MAX_LIMIT))
      : await fetchPage(options.page ?? 1, options.limit);
    printList(list, command);
  });

  principals
    .command('get')
    .alias('show')
    .description('show one principal, by id, exact name or email')
    .argument('<principal>', 'a prn_ id, or an exact name or email')
    .action(async (reference: string, _options: unknown, command: Command) => {
      const client = await connect();
      const id = await resolvePrincipal(client, reference);
      const p = unwrap(await client.GET('/v1/principals/{id}', { params: { path: { id } } }));
      if (wantsJson(command)) {
        printJson(p);
        return;
      }
      const entries: [string, unknown][] = [
        ['id', p.id],
        ['type', p.type],
        ['name', p.name],
      ];
      if (p.email !== undefined) entries.push(['email', p.email]);
      entries.push(
        ['status', p.status],
        ['description', p.description],
        ['risk score', p.risk_score],
        ['risk factors', p.risk_factors.map((f) => `${f.code} (${f.points})`)],
        ['connector', p.connector_source],
        ['created', `${p.created_at} by ${p.created_by}`],
        ['updated', p.updated_at],
        ['last login', p.last_login],
      );
      if (p.deleted_at) entries.push(['deleted', `${p.deleted_at} by ${p.deleted_by ?? '-'}`]);
      for (const [key, value] of Object.entries(p.attributes)) entries.push([`attributes.${key}`, value]);
      for (const [key, value] of Object.entries(p.metadata)) entries.push([`metadata.${key}`, value]);
      out(fields(entries));
    });

  pagingOptions(
    principals
      .command('search')
      .description(
        'search principals: by text in the name, and by type, status and attributes (docs/search.md)',
      )
      .argument('[text]', 'text the name contains (any case)')
      .addOption(typeOption())
      .addOption(statusOption('only principals with this status (default: all but deleted)'))
      .option('--email <text>', 'text the email contains (any case)')
      .option('--attr <key=value>', 'an attribute equal to a value (repeatable)', collect)
      .option('--query <json>', 'a full search query (merged under the options above)')
      .addOption(new Option('--sort <field>', 'sort by this field').choices(SORT_FIELDS))
      .addOption(new Option('--order <order>', 'sort order (default desc)').choices(['asc', 'desc'])),
  ).action(
    async (
      text: string | undefined,
      options: ListOptions & {
        email?: string;
        attr?: string[];
        query?: string;
        sort?: (typeof SORT_FIELDS)[number];
        order?: 'asc' | 'desc';
      },
      command: Command,
    ) => {
      const base = options.query ? parseJsonOption(options.query, '--query') : {};
      if (base === null || typeof base !== 'object' || Array.isArray(base)) {
        throw new CliError('--query must be a JSON object, such as {"risk_score": {"$gte": 50}}');
      }
      const attributes = keyValues(options.attr, '--attr');
      const query: SearchQuery = {
        ...(base as SearchQuery),
        ...(text ? { name: { $contains: text } } : {}),
        ...(options.email ? { email: { $contains: options.email } } : {}),
        ...(options.type ? { type: options.type } : {}),
        ...(options.status ? { status: options.status } : {}),
        ...(Object.keys(attributes).length > 0
          ? { attributes: { ...(base as SearchQuery).attributes, ...attributes } }
          : {}),
      };
      const sort =
        options.sort || options.order
          ? { field: options.sort ?? 'created_at', order: options.order ?? 'desc' }
          : undefined;
      const client = await connect();
      const fetchPage = async (page: number, limit?: number): Promise<PrincipalList> =>
        unwrap(
          await client.POST('/v1/principals/search', {
            body: { query, page, ...(limit ? { limit } : {}), ...(sort ? { sort } : {}) },
          }),
        );
      const list = options.all
        ? await allPages((page) => fetchPage(page, MAX_LIMIT))
        : await fetchPage(options.page ?? 1, options.limit);
      printList(list, command);
    },
  );

  return principals;
}
