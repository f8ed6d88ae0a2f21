/**
 * `pas connectors ls` and `pas connectors sync`: a full snapshot of an identity provider, as
 * JSON lines of SCIM users and groups, reconciled by the service's sync job, whose progress the
 * command follows until the job ends.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { Command } from 'commander';
import { unwrap, type PasClient, type Schema } from '../../clients/typescript/src/index.js';
import { connect } from '../connection.js';
import { CliError, count, fields, note, out, printJson, table, wantsJson } from '../output.js';
import { createProgress, type Progress } from '../progress.js';
import { sleep, stopOnInterrupt } from '../wait.js';

type ConnectorSync = Schema<'ConnectorSync'>;

/** How often a running sync is asked how far it is. */
const POLL_INTERVAL_MS = 500;

/** The id of the connector a command names: a `con_` id as it is, else the active one of that name. */
export async function resolveConnector(client: PasClient, reference: string): Promise<string> {
  if (/^con_/.test(reference)) return reference;
  for (let page = 1; ; page += 1) {
    const list = unwrap(await client.GET('/v1/connectors', { params: { query: { page, limit: 100 } } }));
    const found = list.data.find((c) => c.name === reference);
    if (found) return found.id;
    if (page >= list.pagination.pages) break;
  }
  throw new CliError(`no active connector is named ${reference}`);
}

/**
 * The snapshot file as the request body, read as it is sent (a snapshot may run to hundreds of
 * megabytes), counting the bytes that have gone so that the upload shows its progress too.
 */
function uploadBody(file: string, size: number, progress: Progress): ReadableStream<Uint8Array> {
  let sent = 0;
  const counting = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      progress.update({ stage: 'uploading', done: sent, total: size });
      done(null, chunk);
    },
  });
  return Readable.toWeb(createReadStream(file).pipe(counting)) as ReadableStream<Uint8Array>;
}

function syncStep(sync: ConnectorSync): { stage: string; done: number; total?: number } {
  const { phase, processed, total } = sync.progress;
  if (sync.status === 'pending') return { stage: 'queued', done: 0 };
  return total > 0
    ? { stage: phase, done: processed, total }
    : { stage: phase, done: processed === 0 ? 0 : 100 };
}

function summary(sync: ConnectorSync): string {
  const entries: [string, unknown][] = [
    ['sync', sync.id],
    ['status', sync.status],
    ['bytes', sync.bytes],
  ];
  const c = sync.counts;
  if (c) {
    entries.push(
      ['lines', `${c.lines} (${c.invalid} invalid)`],
      [
        'users',
        `${c.users_created} created, ${c.users_updated} updated, ${c.users_unchanged} unchanged, ${c.users_deprovisioned} deprovisioned`,
      ],
      [
        'groups',
        `${c.groups_created} created, ${c.groups_updated} updated, ${c.groups_unchanged} unchanged, ${c.groups_deleted} deleted`,
      ],
    );
  }
  if (sync.error) entries.push(['error', sync.error]);
  let text = fields(entries);
  if (sync.errors.length > 0) {
    text += `\n\n${count(sync.errors.length, 'line')} in error:\n`;
    text += table(
      ['LINE', 'DETAIL'],
      sync.errors.map((e) => [e.line, e.detail]),
    );
  }
  return text;
}

export function connectorsCommand(): Command {
  const connectors = new Command('connectors').description('identity connectors and their syncs');

  connectors
    .command('ls')
    .alias('list')
    .description('list the active connectors')
    .option('--deleted', 'list the deleted ones instead')
    .action(async (options: { deleted?: boolean }, command: Command) => {
      const client = await connect();
      const list = unwrap(
        await client.GET('/v1/connectors', {
          params: { query: { status: options.deleted ? 'deleted' : 'active', limit: 100 } },
        }),
      );
      if (wantsJson(command)) {
        printJson(list);
        return;
      }
      if (list.data.length === 0) {
        out('No connectors.');
        return;
      }
      out(
        table(
          ['ID', 'NAME', 'PROFILE', 'STATUS', 'CREATED', 'SCIM BASE URL'],
          list.data.map((c) => [c.id, c.name, c.profile, c.status, c.created_at, c.scim_base_url]),
        ),
      );
    });

  connectors
    .command('sync')
    .description(
      'reconcile a connector with a full snapshot (JSON lines of SCIM users and groups) and follow the sync to its end',
    )
    .argument('<file>', 'the snapshot, one SCIM User or Group a line')
    .requiredOption('-c, --connector <connector>', 'the connector: its con_ id or name')
    .option('--no-wait', 'answer once the service has accepted the snapshot')
    .action(async (file: string, options: { connector: string; wait: boolean }, command: Command) => {
      const size = await stat(file).then(
        (s) => s.size,
        (err: NodeJS.ErrnoException) => {
          throw new CliError(`cannot read ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
        },
      );
      const client = await connect();
      const id = await resolveConnector(client, options.connector);
      const progress = createProgress(process.stderr, 'sync');
      let sync: ConnectorSync;
      try {
        sync = unwrap(
          await client.POST('/v1/connectors/{id}/sync', {
            params: { path: { id } },
            // The body goes as it is read from the file, neither parsed nor serialised again.
            body: uploadBody(file, size, progress) as unknown as string,
            bodySerializer: (body: unknown) => body,
            headers: { 'Content-Type': 'application/x-ndjson' },
            // Node's fetch sends a streamed body only when told it needs no answer before it ends.
            duplex: 'half',
          }),
        );
        if (options.wait) {
          const stop = stopOnInterrupt();
          try {
            while (sync.status !== 'completed' && sync.status !== 'failed') {
              progress.update(syncStep(sync));
              await sleep(POLL_INTERVAL_MS, stop.signal);
              if (stop.signal.aborted) break;
              sync = unwrap(
                await client.GET('/v1/connectors/{id}/sync/{sync_id}', {
                  params: { path: { id, sync_id: sync.id } },
                }),
              );
            }
            if (stop.signal.aborted) {
              progress.finish();
              note(`stopped following ${sync.id}; the sync goes on in the service`);
            }
          } finally {
            stop.dispose();
          }
        }
      } finally {
        progress.finish();
      }
      if (wantsJson(command)) printJson(sync);
      else out(summary(sync));
      if (sync.status === 'failed') {
        throw new CliError(`sync ${sync.id} failed${sync.error ? `: ${sync.error}` : ''}`);
      }
    });

  return connectors;
}
