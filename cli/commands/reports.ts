/**
 * `pas reports run`: asks the service for an audit report, follows its generation (the report's
 * own progress, in percent) and writes its content to a file.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Argument, Command, Option } from 'commander';
import { apiError, unwrap, type Schema } from '../../clients/typescript/src/index.js';
import { connect } from '../connection.js';
import { CliError, collect, count, keyValues, note, out, printJson, wantsJson } from '../output.js';
import { createProgress } from '../progress.js';
import { INTERRUPTED, sleep, stopOnInterrupt } from '../wait.js';

type Report = Schema<'Report'>;
type CreateReport = Schema<'CreateReport'>;

const TYPES = [
  'access_review',
  'principal_inventory',
  'dormant_principals',
  'orphaned_principals',
  'audit_log',
] as const satisfies readonly Report['type'][];
// Every report type the API declares is listed above: a new one stops this from compiling.
const _everyType: [Exclude<Report['type'], (typeof TYPES)[number]>] extends [never] ? true : never = true;

/** How often a report being generated is asked how far it is. */
const POLL_INTERVAL_MS = 500;

/** The format a file's name asks for: `.json` is JSON, anything else CSV. */
function formatFor(file: string): Report['format'] {
  return path.extname(file).toLowerCase() === '.json' ? 'json' : 'csv';
}

/** Report parameters from `key=value` pairs: whole numbers as numbers (`days=30`). */
function parameters(pairs: string[] | undefined): Record<string, string | number> {
  const result: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(keyValues(pairs, '--param'))) {
    result[key] = /^[0-9]+$/.test(value) ? Number(value) : value;
  }
  return result;
}

interface RunOptions {
  output: string;
  format?: Report['format'];
  param?: string[];
}

export function reportsCommand(): Command {
  const reports = new Command('reports').description('audit reports');

  reports
    .command('run')
    .description('generate an audit report and write it to a file, showing its progress')
    .addArgument(new Argument('<type>', 'the report type').choices(TYPES))
    .requiredOption('-o, --output <file>', 'where to write the report (- for stdout)')
    .addOption(
      new Option('--format <format>', 'csv or json (default: json for a .json file, else csv)').choices([
        'csv',
        'json',
      ]),
    )
    .option(
      '--param <key=value>',
      'a report parameter (repeatable): days=90 for dormant_principals, since=… and until=… for audit_log',
      collect,
    )
    .action(async (type: Report['type'], options: RunOptions, command: Command) => {
      const toStdout = options.output === '-';
      const format = options.format ?? (toStdout ? 'csv' : formatFor(options.output));
      const params = parameters(options.param);
      const client = await connect();
      const body = {
        type,
        format,
        ...(Object.keys(params).length > 0 ? { parameters: params } : {}),
      } as CreateReport;
      let report = unwrap(await client.POST('/v1/audit/reports', { body }));

      const progress = createProgress(process.stderr, `report ${report.type}`);
      const stop = stopOnInterrupt();
      try {
        while (report.status !== 'completed' && report.status !== 'failed') {
          progress.update({ stage: report.status, done: report.progress });
          await sleep(POLL_INTERVAL_MS, stop.signal);
          if (stop.signal.aborted) break;
          report = unwrap(
            await client.GET('/v1/audit/reports/{id}', { params: { path: { id: report.id } } }),
          );
        }
      } finally {
        progress.finish();
        stop.dispose();
      }
      if (stop.signal.aborted) {
        note(
          `stopped waiting for ${report.id}; the report goes on in the service (pas reports get ${report.id})`,
        );
        process.exitCode = INTERRUPTED;
        return;
      }
      if (report.status === 'failed') {
        throw new CliError(`report ${report.id} failed${report.error ? `: ${report.error}` : ''}`);
      }

      const content = await client.GET('/v1/audit/reports/{id}/content', {
        params: { path: { id: report.id } },
        parseAs: 'stream',
      });
      if (!content.response.ok || !content.data) throw apiError(content.response.status, content.error);
      const source = Readable.fromWeb(content.data as WebReadableStream<Uint8Array>);
      if (toStdout) {
        await pipeline(source, process.stdout, { end: false });
      } else {
        try {
          await pipeline(source, createWriteStream(options.output));
        } catch (err) {
          await rm(options.output, { force: true });
          throw new CliError(`cannot write ${options.output}: ${(err as Error).message}`);
        }
      }
      const where = toStdout ? 'stdout' : options.output;
      if (wantsJson(command) && !toStdout) printJson({ ...report, output: options.output });
      else note(`${report.id}: ${count(report.row_count, 'row')} written to ${where}`);
    });

  reports
    .command('get')
    .description('show a report')
    .argument('<id>', 'the rpt_ id')
    .action(async (id: string, _options: unknown, command: Command) => {
      const client = await connect();
      const report = unwrap(await client.GET('/v1/audit/reports/{id}', { params: { path: { id } } }));
      if (wantsJson(command)) printJson(report);
      else
        out(
          [
            `${report.id}  ${report.type} (${report.format})  ${report.status} ${report.progress}%`,
            `requested ${report.requested_at} by ${report.requested_by}`,
            `${count(report.row_count, 'row')}${report.download_url ? `, content at ${report.download_url}` : ''}`,
            ...(report.error ? [`error: ${report.error}`] : []),
          ].join('\n'),
        );
    });

  return reports;
}
