import { expect } from 'chai';
import { eventually } from '../helpers/wait.js';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ADMIN_CLIENT_ID, ADMIN_CLIENT_SECRET } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { snapshotLines } from '../helpers/sync.js';

/**
 * The `pas` command line as a user runs it: bin/pas.js as a child process against the real
 * service, with its credentials in the environment (or a stored login in a throwaway home), and
 * what the user sees checked: exit codes, tables, JSON on stdout, messages and progress on stderr.
 */

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Running {
  child: ReturnType<typeof spawn>;
  /** Resolves once stdout or stderr (as they are so far) satisfy `test`. */
  waitFor(test: (run: Run) => boolean, ms?: number): Promise<void>;
  done: Promise<Run>;
}

let sequence = 0;
const uniq = (base: string): string => `${base}${Date.now().toString(36)}${(sequence += 1)}`;

describe('pas command line', function () {
  // Every command starts a Node process that compiles the command line's sources on its first run.
  this.timeout(60_000);
  const fx = useApp();
  let home: string;
  let url: string;

  before(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'pas-cli-'));
    url = fx.app.config.publicBaseUrl;
  });

  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  /** The environment of a command: a home of its own, the PAS_ variables only as given. */
  function environment(pas: Record<string, string | undefined>): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
    };
    for (const name of ['PAS_URL', 'PAS_CLIENT_ID', 'PAS_CLIENT_SECRET']) delete env[name];
    for (const [name, value] of Object.entries(pas)) if (value !== undefined) env[name] = value;
    return env;
  }

  const admin = (): Record<string, string> => ({
    PAS_URL: url,
    PAS_CLIENT_ID: ADMIN_CLIENT_ID,
    PAS_CLIENT_SECRET: ADMIN_CLIENT_SECRET,
  });

  /** Starts `pas` with arguments; the service runs in this process, so the child must not block it. */
  function start(args: string[], pas: Record<string, string | undefined> = admin(), input?: string): Running {
    const child = spawn(process.execPath, ['bin/pas.js', ...args], {
      env: environment(pas),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const run: Run = { code: null, signal: null, stdout: '', stderr: '' };
    const watchers = new Set<() => void>();
    child.stdout.on('data', (d: Buffer) => {
      run.stdout += d.toString();
      watchers.forEach((w) => w());
    });
    child.stderr.on('data', (d: Buffer) => {
      run.stderr += d.toString();
      watchers.forEach((w) => w());
    });
    child.stdin.end(input ?? '');
    const done = new Promise<Run>((resolve) => {
      child.on('close', (code, signal) => {
        run.code = code;
        run.signal = signal;
        watchers.forEach((w) => w());
        resolve(run);
      });
    });
    const waitFor = (test: (run: Run) => boolean, ms = 30_000): Promise<void> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error(`timed out waiting; stdout: ${run.stdout}\nstderr: ${run.stderr}`));
        }, ms);
        function check(): void {
          if (test(run)) {
            clearTimeout(timer);
            watchers.delete(check);
            resolve();
          } else if (run.code !== null || run.signal !== null) {
            clearTimeout(timer);
            watchers.delete(check);
            reject(new Error(`pas ended first (${run.code}); stdout: ${run.stdout}\nstderr: ${run.stderr}`));
          }
        }
        watchers.add(check);
        check();
      });
    return { child, waitFor, done };
  }

  const pas = (args: string[], env?: Record<string, string | undefined>, input?: string): Promise<Run> =>
    start(args, env, input).done;

  /** Runs `pas` with --json and answers what it printed, parsed; fails unless it exits 0. */
  async function json(args: string[], env?: Record<string, string | undefined>): Promise<any> {
    const run = await pas([...args, '--json'], env);
    expect(run.code, run.stderr).to.equal(0);
    return JSON.parse(run.stdout);
  }

  async function principal(name: string): Promise<string> {
    const res = await fx.api.post('/v1/principals', {
      type: 'SERVICE_ACCOUNT',
      name,
      attributes: { team: 'billing' },
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  }

  async function allowRead(principalId: string, identifier: string): Promise<string> {
    const res = await fx.api.post('/v1/policies', {
      name: uniq('cli-reads-'),
      effect: 'allow',
      subjects: { principals: [principalId] },
      actions: ['read'],
      resources: [{ type: 'database', identifier }],
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  }

  describe('usage', () => {
    it('prints its help and exits 0; an unknown command or a missing argument exits 2', async () => {
      const help = await pas(['--help'], {});
      expect(help.code).to.equal(0);
      for (const command of [
        'login',
        'principals',
        'check',
        'access',
        'who-can',
        'connectors',
        'reports',
        'decisions',
        'access-changes',
      ]) {
        expect(help.stdout).to.include(command);
      }
      const unknown = await pas(['frobnicate'], {});
      expect(unknown.code).to.equal(2);
      expect(unknown.stderr).to.include("unknown command 'frobnicate'");
      const missing = await pas(['check', 'someone', 'read']);
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.include("missing required argument 'resource'");
    });

    it('says how to log in when it has no credentials, and exits 2', async () => {
      const run = await pas(['principals', 'ls'], {});
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('not logged in: run `pas login`, or set PAS_URL');
      expect(run.stdout).to.equal('');
    });

    it('reports a service it cannot reach, and exits 2', async () => {
      const run = await pas(['principals', 'ls'], { ...admin(), PAS_URL: 'http://127.0.0.1:9' });
      expect(run.code).to.equal(2);
      expect(run.stderr).to.match(/^pas: cannot reach the service: /);
    });
  });

  describe('principals', () => {
    let id: string;
    let name: string;

    before(async () => {
      name = uniq('invoice-exporter-');
      id = await principal(name);
    });

    it('ls lists them as a table, and as the API answers them with --json', async () => {
      const table = await pas(['principals', 'ls', '--type', 'SERVICE_ACCOUNT', '--limit', '100']);
      expect(table.code, table.stderr).to.equal(0);
      const [header, ...rows] = table.stdout.trim().split('\n');
      expect(header).to.match(/^ID\s+TYPE\s+NAME\s+EMAIL\s+STATUS\s+RISK\s+SOURCE\s+CREATED$/);
      expect(rows.find((r) => r.startsWith(id)))
        .to.include(name)
        .and.include('SERVICE_ACCOUNT');
      expect(rows.at(-1)).to.match(/^\d+ principals?, page 1 of \d+$/);

      const list = await json(['principals', 'ls', '--all']);
      expect(list.pagination.total).to.equal(list.data.length);
      expect(list.data.map((p: any) => p.id)).to.include(id);
    });

    it('get shows one principal by id or by exact name', async () => {
      const byName = await pas(['principals', 'get', name]);
      expect(byName.code, byName.stderr).to.equal(0);
      expect(byName.stdout).to.match(new RegExp(`^id:\\s+${id}$`, 'm'));
      expect(byName.stdout).to.match(/^attributes\.team:\s+billing$/m);
      const byId = await json(['principals', 'get', id]);
      expect(byId).to.include({ id, name, type: 'SERVICE_ACCOUNT', status: 'active' });
    });

    it('get of a principal that does not exist shows the problem and exits 2', async () => {
      const run = await pas(['principals', 'get', 'prn_01JD0000000000000000000000']);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.match(/^pas: Not Found: /);
      expect(run.stderr).to.match(/\(request [^)]+\)/);
      const unnamed = await pas(['principals', 'get', uniq('nobody-')]);
      expect(unnamed.code).to.equal(2);
      expect(unnamed.stderr).to.include('no principal is named');
    });

    it('search finds them by text in the name and by attribute', async () => {
      const found = await json(['principals', 'search', name.slice(0, -2), '--attr', 'team=billing']);
      expect(found.data.map((p: any) => p.id)).to.include(id);
      const none = await json(['principals', 'search', name, '--attr', 'team=other']);
      expect(none.data).to.deep.equal([]);
      const table = await pas(['principals', 'search', name]);
      expect(table.code, table.stderr).to.equal(0);
      expect(table.stdout).to.include(name).and.include('1 principal, page 1 of 1');
    });
  });

  describe('check, access and who-can', () => {
    let id: string;
    let name: string;
    let database: string;
    let policy: string;

    before(async () => {
      name = uniq('reader-');
      id = await principal(name);
      database = uniq('invoices-');
      policy = await allowRead(id, database);
    });

    it('check exits 0 on ALLOW and 1 on DENY, saying which', async () => {
      const allow = await pas(['check', name, 'read', `database:${database}`]);
      expect(allow.code, allow.stderr).to.equal(0);
      expect(allow.stdout).to.match(new RegExp(`^ALLOW  ${id} read database:${database}$`, 'm'));
      expect(allow.stdout).to.include(`POLICY_ALLOW ${policy} v1`);

      const deny = await pas(['check', id, 'delete', `database:${database}`]);
      expect(deny.code, deny.stderr).to.equal(1);
      expect(deny.stdout).to.match(/^DENY /);
      expect(deny.stdout).to.include('NO_MATCHING_POLICY');
    });

    it('check --json prints the decision, --explain the policies considered and what would allow it', async () => {
      const decision = await pas(['check', id, 'read', `database:${database}`, '--json']);
      expect(decision.code).to.equal(0);
      expect(JSON.parse(decision.stdout)).to.include({ decision: 'ALLOW', allowed: true, principal_id: id });

      const other = await principal(uniq('outsider-'));
      const explained = await pas(['check', other, 'read', `database:${database}`, '--explain']);
      expect(explained.code, explained.stderr).to.equal(1);
      expect(explained.stdout)
        .to.include('Policies considered:')
        .and.include('does not select the principal');
      expect(explained.stdout).to.include('Near misses:').and.include('not_subject');
      expect(explained.stdout).to.include('What would allow it:').and.include('add_to_policy');

      const denied = await pas(['check', other, 'read', `database:${database}`, '--explain', '--json']);
      expect(denied.code).to.equal(1);
      const body = JSON.parse(denied.stdout);
      expect(body.decision).to.equal('DENY');
      expect(body.near_misses[0].policy_id).to.equal(policy);
    });

    it('check exits 2 on any error, with the problem the service answered', async () => {
      const invalid = await pas(['check', id, 'Not An Action', `database:${database}`]);
      expect(invalid.code).to.equal(2);
      expect(invalid.stderr).to.match(/^pas: Bad Request: /);
      expect(invalid.stderr).to.include('/action');
      expect(invalid.stdout).to.equal('');

      const malformed = await pas(['check', id, 'read', 'invoices']);
      expect(malformed.code).to.equal(2);
      expect(malformed.stderr).to.include('a resource is written type:identifier');

      const wrongSecret = await pas(['check', id, 'read', `database:${database}`], {
        ...admin(),
        PAS_CLIENT_SECRET: 'not-the-secret',
      });
      expect(wrongSecret.code).to.equal(2);
      expect(wrongSecret.stderr).to.include('invalid_client');
    });

    it('access lists what the principal can reach', async () => {
      const table = await pas(['access', name]);
      expect(table.code, table.stderr).to.equal(0);
      expect(table.stdout).to.match(/^RESOURCE\s+ACTIONS\s+GRANTED BY\s+CONDITIONAL\s+EXPIRES$/m);
      expect(table.stdout).to.match(
        new RegExp(`^database:${database}\\s+read\\s+${policy}\\s+no\\s+-$`, 'm'),
      );
      const record = await json(['access', id, '--explain']);
      expect(record.principal_id).to.equal(id);
      expect(record.access).to.have.length(1);
      expect(record.access[0].grants[0]).to.include({ policy_id: policy, via: 'principal' });
    });

    it('who-can lists the principals that may take the action', async () => {
      const table = await pas(['who-can', 'read', `database:${database}`]);
      expect(table.code, table.stderr).to.equal(0);
      expect(table.stdout).to.match(
        new RegExp(`^${id}\\s+${name}\\s+SERVICE_ACCOUNT\\s+read\\s+${policy}`, 'm'),
      );
      expect(table.stdout).to.include(`1 principal may read database:${database}`);
      const answer = await json(['who-can', 'read', `database:${database}`]);
      expect(answer.principals.map((p: any) => p.principal.id)).to.deep.equal([id]);
      const nobody = await pas(['who-can', 'delete', `database:${database}`]);
      expect(nobody.code).to.equal(0);
      expect(nobody.stdout).to.include('No principal may delete');
    });
  });

  describe('login', () => {
    const configFile = (): string => path.join(home, '.config', 'pas', 'config.json');

    afterEach(async () => {
      await rm(path.join(home, '.config'), { recursive: true, force: true });
    });

    it('checks the credentials and stores them readable by the user alone', async () => {
      const run = await pas(
        ['login', '--url', url, '--client-id', ADMIN_CLIENT_ID, '--client-secret', ADMIN_CLIENT_SECRET],
        {},
      );
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.include(`Logged in to ${url} as ${ADMIN_CLIENT_ID}`);
      const file = await stat(configFile());
      expect(file.mode & 0o777).to.equal(0o600);
      expect((await stat(path.dirname(configFile()))).mode & 0o777).to.equal(0o700);
      expect(JSON.parse(await readFile(configFile(), 'utf8'))).to.deep.equal({
        url,
        client_id: ADMIN_CLIENT_ID,
        client_secret: ADMIN_CLIENT_SECRET,
      });

      // The stored login serves the other commands when the environment names nothing.
      const list = await json(['principals', 'ls'], {});
      expect(list).to.have.property('pagination');
    });

    it('asks for what it is not given, reading answers from standard input', async () => {
      const run = await pas(['login'], {}, `${url}\n${ADMIN_CLIENT_ID}\n${ADMIN_CLIENT_SECRET}\n`);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stderr).to.include('Service URL').and.include('Client id').and.include('Client secret');
      expect(run.stderr).not.to.include(ADMIN_CLIENT_SECRET);
      expect(JSON.parse(await readFile(configFile(), 'utf8'))).to.include({
        url,
        client_id: ADMIN_CLIENT_ID,
      });
    });

    it('stores nothing when the service refuses the credentials', async () => {
      const run = await pas(
        ['login', '--url', url, '--client-id', ADMIN_CLIENT_ID, '--client-secret', 'wrong-secret'],
        {},
      );
      expect(run.code).to.equal(2);
      expect(run.stderr).to.match(/^pas: invalid_client/);
      const missing = await stat(configFile()).then(
        () => false,
        (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
      );
      expect(missing).to.equal(true);
    });

    it('gives way to PAS_URL, PAS_CLIENT_ID and PAS_CLIENT_SECRET', async () => {
      expect(
        (
          await pas(
            ['login', '--url', url, '--client-id', ADMIN_CLIENT_ID, '--client-secret', ADMIN_CLIENT_SECRET],
            {},
          )
        ).code,
      ).to.equal(0);
      // A wrong secret in the environment wins over the right one stored...
      const overridden = await pas(['principals', 'ls'], { PAS_CLIENT_SECRET: 'from-the-environment' });
      expect(overridden.code).to.equal(2);
      expect(overridden.stderr).to.include('invalid_client');
      // ...and a stored login that no longer works is not read when the environment has all three.
      await writeFile(
        configFile(),
        JSON.stringify({ url: 'http://127.0.0.1:9', client_id: 'cli_stale', client_secret: 'stale' }),
      );
      expect((await json(['principals', 'ls'], admin())).pagination.page).to.equal(1);
      const stale = await pas(['principals', 'ls'], {});
      expect(stale.code).to.equal(2);
      expect(stale.stderr).to.include('cannot reach the service');
    });
  });

  describe('connectors sync', () => {
    it('uploads a snapshot, shows the sync progress and its counts, and exits 0 once completed', async () => {
      const name = uniq('okta-');
      const created = await fx.api.post('/v1/connectors', { name });
      expect(created.status, created.text).to.equal(201);
      const users = ['ann', 'bob', 'cat'].map((n) => ({
        schemas: [USER],
        userName: `${n}.${uniq('')}@example.com`,
        name: { givenName: n, familyName: 'Example' },
        active: true,
      }));
      const file = path.join(home, 'snapshot.ndjson');
      await writeFile(
        file,
        snapshotLines([...users, { schemas: [GROUP], displayName: uniq('staff-'), members: [] }]),
      );

      const run = await pas(['connectors', 'sync', file, '--connector', name]);
      expect(run.code, run.stderr).to.equal(0);
      // stderr is not a terminal here: progress comes as plain lines, the phase first.
      expect(run.stderr).to.match(/^sync: /m);
      expect(run.stdout).to.match(/^status:\s+completed$/m);
      expect(run.stdout).to.match(/^users:\s+3 created, 0 updated, 0 unchanged, 0 deprovisioned$/m);
      expect(run.stdout).to.match(/^groups:\s+1 created/m);

      const again = await json(['connectors', 'sync', file, '--connector', created.body.id]);
      expect(again.status).to.equal('completed');
      expect(again.counts).to.include({ lines: 4, users_unchanged: 3, users_created: 0 });

      const listed = await json(['principals', 'ls', '--source', name]);
      expect(listed.data.map((p: any) => p.name).sort()).to.have.length(3);
    });

    it('exits 2 for a connector or file that does not exist', async () => {
      const connector = await pas([
        'connectors',
        'sync',
        'test/http/cli.test.ts',
        '--connector',
        uniq('none-'),
      ]);
      expect(connector.code).to.equal(2);
      expect(connector.stderr).to.include('no active connector is named');
      const file = await pas(['connectors', 'sync', path.join(home, 'missing.ndjson'), '--connector', 'x']);
      expect(file.code).to.equal(2);
      expect(file.stderr).to.include('no such file');
    });
  });

  describe('reports run', () => {
    it('generates a report with its progress and writes it to the file', async () => {
      await principal(uniq('inventoried-'));
      const csv = path.join(home, 'inventory.csv');
      const run = await pas(['reports', 'run', 'principal_inventory', '-o', csv]);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stderr).to.match(/^report principal_inventory: (pending|running)/m);
      expect(run.stderr).to.match(/rpt_\w+: \d+ rows? written to .*inventory\.csv/);
      const text = await readFile(csv, 'utf8');
      expect(text.split('\n')[0]).to.include('id');
      expect(text).to.include('inventoried-');

      const jsonFile = path.join(home, 'inventory.json');
      const report = await json(['reports', 'run', 'principal_inventory', '-o', jsonFile]);
      expect(report).to.include({ status: 'completed', format: 'json', output: jsonFile });
      const content = JSON.parse(await readFile(jsonFile, 'utf8'));
      expect(content.row_count).to.equal(report.row_count).and.to.be.greaterThan(0);
    });

    it('exits 2 for a parameter the report type does not take', async () => {
      const run = await pas([
        'reports',
        'run',
        'principal_inventory',
        '-o',
        path.join(home, 'x.csv'),
        '--param',
        'days=3',
      ]);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.match(/^pas: Bad Request/);
    });
  });

  describe('decisions tail', () => {
    async function evaluate(principalId: string, action: string, identifier: string): Promise<any> {
      const res = await fx.api.post('/v1/decisions/evaluate', {
        principal_id: principalId,
        action,
        resource: { type: 'database', identifier },
      });
      expect(res.status, res.text).to.equal(200);
      return res.body;
    }

    /** Waits until the service lists `n` decisions for the principal (after its settle window). */
    async function listed(principalId: string, since: string, n: number): Promise<void> {
      await eventually(
        async () => {
          const res = await fx.api.get(
            `/v1/decisions?principal_id=${principalId}&since=${encodeURIComponent(since)}`,
          );
          expect(res.status, res.text).to.equal(200);
          return res.body.data.length as number;
        },
        (count) => count >= n,
        15_000,
        200,
      );
    }

    it('prints the decisions made since an instant, a line each, and stops', async () => {
      const since = new Date().toISOString();
      const id = await principal(uniq('decided-'));
      const database = uniq('ledger-');
      const policy = await allowRead(id, database);
      const allowed = await evaluate(id, 'read', database);
      const denied = await evaluate(id, 'delete', database);
      await listed(id, since, 2);

      const records = (
        await pas(['decisions', 'tail', '--since', since, '--principal', id, '--no-follow', '--json'])
      ).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(records.map((r) => r.id)).to.deep.equal([allowed.id, denied.id]);
      expect(records[0]).to.deep.include({ decision: 'ALLOW', action: 'read', principal_id: id });
      expect(records[0].reasons).to.deep.equal([
        { code: 'POLICY_ALLOW', policy_id: policy, policy_version: 1 },
      ]);

      const denies = await pas([
        'decisions',
        'tail',
        '--since',
        since,
        '--principal',
        id,
        '--decision',
        'deny',
        '--no-follow',
      ]);
      expect(denies.code, denies.stderr).to.equal(0);
      expect(denies.stdout.trim().split('\n')).to.deep.equal([
        `${denied.evaluated_at}  DENY   ${id}  delete  database:${database}  NO_MATCHING_POLICY  ${denied.id}`,
      ]);
      const none = await pas([
        'decisions',
        'tail',
        '--since',
        since,
        '--principal',
        id,
        '--action',
        'write',
        '--no-follow',
      ]);
      expect(none.code, none.stderr).to.equal(0);
      expect(none.stdout).to.equal('');
      const wrong = await pas(['decisions', 'tail', '--decision', 'maybe', '--no-follow']);
      expect(wrong.code).to.equal(2);
      expect(wrong.stderr).to.include('allow or deny');
    });

    it('follows new decisions until interrupted, then exits 0', async () => {
      const id = await principal(uniq('followed-'));
      const database = uniq('followed-db-');
      const policy = await allowRead(id, database);
      const tail = start([
        'decisions',
        'tail',
        '--principal',
        id,
        '--resource-type',
        'database',
        '--interval',
        '0.2',
      ]);
      await tail.waitFor((run) => run.stderr.includes('Ctrl-C stops'));
      const allowed = await evaluate(id, 'read', database);
      await tail.waitFor((run) => run.stdout.includes(allowed.id));
      const denied = await evaluate(id, 'write', database);
      await tail.waitFor((run) => run.stdout.includes(denied.id));
      tail.child.kill('SIGINT');
      const run = await tail.done;
      expect(run.code, run.stderr).to.equal(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines).to.deep.equal([
        `${allowed.evaluated_at}  ALLOW  ${id}  read  database:${database}  POLICY_ALLOW ${policy}  ${allowed.id}`,
        `${denied.evaluated_at}  DENY   ${id}  write  database:${database}  NO_MATCHING_POLICY  ${denied.id}`,
      ]);
    });
  });

  describe('access-changes tail', () => {
    it('prints the changes to what decisions answer since an instant, and stops', async () => {
      const since = new Date().toISOString();
      const id = await principal(uniq('tailed-'));
      const database = uniq('ledger-');
      await allowRead(id, database);
      const changes = (
        await pas(['access-changes', 'tail', '--since', since, '--no-follow', '--json'])
      ).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      const mine = changes.filter((c) => c.principal.id === id);
      expect(mine).to.have.length(1);
      expect(mine[0]).to.deep.include({ actions_gained: ['read'], actions_lost: [] });
      expect(mine[0].resource).to.deep.equal({ type: 'database', identifier: database });
    });

    it('follows new changes until interrupted, then exits 0', async () => {
      const id = await principal(uniq('followed-'));
      const tail = start(['access-changes', 'tail', '--principal', id, '--interval', '0.2']);
      await tail.waitFor((run) => run.stderr.includes('Ctrl-C stops'));
      const database = uniq('followed-db-');
      const policy = await allowRead(id, database);
      await tail.waitFor((run) => run.stdout.includes(`database:${database}`));
      await fx.api.delete(`/v1/policies/${policy}`);
      await tail.waitFor((run) => run.stdout.includes('policy.deleted'));
      tail.child.kill('SIGINT');
      const run = await tail.done;
      expect(run.code, run.stderr).to.equal(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines).to.have.length(2);
      expect(lines[0]).to.match(
        new RegExp(
          `^\\S+Z  followed-\\S+ \\(${id}\\)  \\+read  database:${database}  via cli-reads-\\S+  \\[policy\\.created by client ${ADMIN_CLIENT_ID}\\]$`,
        ),
      );
      expect(lines[1]).to.include('  -read  ').and.include('policy.deleted');
    });
  });
});
