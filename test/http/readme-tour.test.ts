import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { writeBootstrapFile } from '../../src/auth/clients.js';
import { projectRoot } from '../../src/paths.js';
import { ADMIN_CLIENT_ID, ADMIN_CLIENT_SECRET } from '../helpers/app.js';
import { cypher } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';

const SECTION = 'Five-minute tour';
/** Where the tour's commands find the service: `npm start` on the default port. */
const TOUR_BASE_URL = 'http://localhost:8080';
const ID = '[0-7][0-9A-HJKMNP-TV-Z]{25}';

/** A section the README's tour continues into: its heading, in the README or in a page of docs/. */
type Continuation = string | { file: string; heading: string };

/**
 * The fenced blocks of one language in a section of the README (the tour), or of a page that
 * continues it, in the order they appear.
 */
function tourBlocks(language: 'sh' | 'cypher', heading = SECTION, file = 'README.md'): string[] {
  const readme = readFileSync(path.join(projectRoot(), file), 'utf8');
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`${file} has no "## ${heading}" section`);
  const rest = readme.slice(start + 1);
  const end = rest.indexOf('\n## ');
  const section = end === -1 ? rest : rest.slice(0, end);
  return [...section.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

/** The shell blocks in tour order; `about` names what each is for, so a reordered tour fails clearly. */
const STEPS = [
  { about: 'bootstrap-admin.json' },
  { about: '/v1/auth/token' },
  { about: '/v1/principals' },
  { about: '/v1/policies' },
  { about: '/v1/decisions/evaluate' },
  { about: '/access?explain=true' },
] as const;

/** The block of each step, by what it makes. */
const BLOCK = { credentials: 0, token: 1, serviceAccount: 2, policy: 3, decision: 4, access: 5 } as const;

interface TourRun {
  code: number | null;
  stderr: string;
  /** What each shell block printed, in order. */
  printed: string[];
}

/**
 * Runs the tour's shell blocks as one bash script, as a newcomer pastes them into one shell, in a
 * folder whose `data/bootstrap-admin.json` holds the credentials of the service's bootstrap
 * client (`secret` replaces its secret) as a first start writes them; the service's address
 * replaces the tour's `http://localhost:8080`, and nothing else of the commands changes. The
 * script stops at the first command that fails, and a line of its own before each block tells
 * which block printed what.
 */
async function runTour(
  baseUrl: string,
  after: Continuation[] = [],
  secret = ADMIN_CLIENT_SECRET,
): Promise<TourRun> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'pas-tour-'));
  try {
    await writeBootstrapFile(path.join(folder, 'data', 'bootstrap-admin.json'), {
      client_id: ADMIN_CLIENT_ID,
      client_secret: secret,
    });
    return await runTourIn(folder, baseUrl, after);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function runTourIn(folder: string, baseUrl: string, after: Continuation[]): Promise<TourRun> {
  const blocks = [
    ...tourBlocks('sh'),
    ...after.flatMap((next) =>
      typeof next === 'string' ? tourBlocks('sh', next) : tourBlocks('sh', next.heading, next.file),
    ),
  ];
  const marker = (i: number): string => `@@tour block ${i}@@`;
  const script = [
    'set -euo pipefail',
    ...blocks.flatMap((block, i) => [`echo '${marker(i)}'`, block.replaceAll(TOUR_BASE_URL, baseUrl)]),
  ].join('\n');
  const child = spawn('bash', ['-c', script], {
    cwd: folder,
    // The shell the tour assumes: node and curl on the PATH, and no proxy.
    env: {
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`,
      LANG: 'C.UTF-8',
      NO_PROXY: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const printed = blocks.map((_, i) => {
    const from = stdout.indexOf(`${marker(i)}\n`);
    if (from === -1) return '';
    const next = stdout.indexOf(`${marker(i + 1)}\n`);
    return stdout.slice(from + marker(i).length + 1, next === -1 ? undefined : next);
  });
  return { code, stderr, printed };
}

describe('README: Five-minute tour', function () {
  // A service start and a dozen short node and curl processes.
  this.timeout(60_000);
  const fx = useApp();
  let run: TourRun;

  before(async () => {
    run = await runTour(fx.http.baseUrl);
  });

  /** What the tour's shell block `i` printed, once the whole tour has run without a failure. */
  function printed(i: number): string {
    expect(
      run.code,
      `the tour failed (exit ${run.code}):\n${run.stderr}\n${run.printed.join('\n')}`,
    ).to.equal(0);
    return run.printed[i]!;
  }
  function printedJson(i: number): any {
    const text = printed(i);
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`tour step ${i + 1} printed no JSON document:\n${text}`);
    }
  }

  it('has the steps this test knows, with the service address in one place', () => {
    const blocks = tourBlocks('sh');
    expect(blocks).to.have.length(STEPS.length);
    blocks.forEach((block, i) => expect(block, `step ${i + 1}`).to.contain(STEPS[i]!.about));
    expect(blocks.join('\n').split(TOUR_BASE_URL)).to.have.length(2);
    expect(tourBlocks('cypher')).to.have.length(1);
  });

  it('runs every step without a failure', () => {
    printed(STEPS.length - 1);
    expect(run.stderr).to.equal('');
  });

  it('takes the credentials from the file a first start writes, and prints nothing for the token', () => {
    expect(printed(BLOCK.credentials)).to.equal('');
    expect(printed(BLOCK.token)).to.equal('');
  });

  it('creates a service account and a policy', async () => {
    const sa = printed(BLOCK.serviceAccount).trim();
    const policy = printed(BLOCK.policy).trim();
    expect(sa).to.match(new RegExp(`^prn_${ID}$`));
    expect(policy).to.match(new RegExp(`^pol_${ID}$`));
    const api = fx.api;
    const principal = await api.get(`/v1/principals/${sa}`);
    expect(principal.status, principal.text).to.equal(200);
    expect(principal.body).to.include({ type: 'SERVICE_ACCOUNT', status: 'active' });
    const stored = await api.get(`/v1/policies/${policy}`);
    expect(stored.status, stored.text).to.equal(200);
    expect(stored.body).to.include({
      name: 'invoice-exporter-reads-invoices',
      effect: 'allow',
      status: 'active',
    });
    expect(stored.body.subjects.principals).to.deep.equal([sa]);
  });

  it('answers the decision ALLOW, with the policy as its reason and a trace', () => {
    const sa = printed(BLOCK.serviceAccount).trim();
    const policy = printed(BLOCK.policy).trim();
    const decision = printedJson(BLOCK.decision);
    expect(decision).to.include({ decision: 'ALLOW', allowed: true, principal_id: sa, action: 'read' });
    expect(decision.resource).to.deep.equal({ type: 'database', identifier: 'invoices' });
    expect(
      decision.reasons.map((r: { code: string; policy_id?: string }) => [r.code, r.policy_id]),
    ).to.deep.equal([['POLICY_ALLOW', policy]]);
    expect(decision.granted_by).to.deep.equal([policy]);
    expect(decision.trace, 'explain: true adds the trace').to.be.an('object');
    expect(JSON.stringify(decision.trace)).to.contain(policy).and.to.contain(sa);
  });

  it('is right that another action is denied for want of a policy', async () => {
    const sa = printed(BLOCK.serviceAccount).trim();
    const api = fx.api;
    const res = await api.post('/v1/decisions/evaluate', {
      principal_id: sa,
      action: 'delete',
      resource: { type: 'database', identifier: 'invoices' },
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.decision).to.equal('DENY');
    expect(res.body.reasons.map((r: { code: string }) => r.code)).to.deep.equal(['NO_MATCHING_POLICY']);
  });

  it("lists the policy's grant in the service account's access", () => {
    const sa = printed(BLOCK.serviceAccount).trim();
    const policy = printed(BLOCK.policy).trim();
    const access = printedJson(BLOCK.access);
    expect(access.principal_id).to.equal(sa);
    expect(access.access).to.have.length(1);
    const [entry] = access.access;
    expect(entry.resource).to.deep.equal({ type: 'database', identifier: 'invoices' });
    expect(entry.actions).to.deep.equal(['read']);
    expect(entry.granted_by).to.deep.equal([policy]);
    expect(entry.grants).to.have.length(1);
    expect(entry.grants[0]).to.include({
      policy_id: policy,
      policy_name: 'invoice-exporter-reads-invoices',
      via: 'principal',
    });
  });

  it('has a Cypher query that finds the service account, its policy and the resource', async () => {
    const sa = printed(BLOCK.serviceAccount).trim();
    const policy = printed(BLOCK.policy).trim();
    const rows = await cypher(fx.app.runtime.db, tourBlocks('cypher')[0]!);
    expect(rows).to.have.length(1);
    const [row] = rows as Record<string, Record<string, unknown>>[];
    expect(row!['sa']).to.include({ id: sa, type: 'SERVICE_ACCOUNT', name: 'invoice-exporter' });
    expect(row!['policy']).to.include({ id: policy, name: 'invoice-exporter-reads-invoices' });
    expect(row!['db']).to.include({ type: 'database', identifier: 'invoices' });
  });

  it('can be run again: the second run finds the service account and its policy, and answers alike', async () => {
    const again = await runTour(fx.http.baseUrl);
    expect(again.code, `the second run failed (exit ${again.code}):\n${again.stderr}`).to.equal(0);
    expect(again.stderr).to.equal('');
    expect(again.printed[BLOCK.serviceAccount]).to.equal(printed(BLOCK.serviceAccount));
    expect(again.printed[BLOCK.policy]).to.equal(printed(BLOCK.policy));
    expect(JSON.parse(again.printed[BLOCK.decision]!).decision).to.equal('ALLOW');
    expect(JSON.parse(again.printed[BLOCK.access]!).access).to.have.length(1);
    const named = await fx.api.post('/v1/principals/search', {
      query: { type: 'SERVICE_ACCOUNT', name: 'invoice-exporter' },
    });
    expect(named.body.data, 'one service account, made by the first run').to.have.length(1);
    expect(await cypher(fx.app.runtime.db, tourBlocks('cypher')[0]!)).to.have.length(1);
  });

  it('stops at the token step, printing the answer, when the secret is wrong', async () => {
    const wrong = await runTour(fx.http.baseUrl, [], 'not-the-secret-0123456789abcdef');
    expect(wrong.code).to.not.equal(0);
    expect(wrong.printed.slice(BLOCK.serviceAccount).join(''), 'no step after the token ran').to.equal('');
    expect(wrong.stderr).to.contain('no access_token in the answer:');
    expect(wrong.stderr).to.contain('"error":"invalid_client"');
  });
});

describe("docs/guides.md: Agents and delegation, after the README's tour", function () {
  this.timeout(60_000);
  const fx = useApp();
  let run: TourRun;

  before(async () => {
    run = await runTour(fx.http.baseUrl, [{ file: 'docs/guides.md', heading: 'Agents and delegation' }]);
  });

  it('runs its example in the tour’s shell and answers the explained ALLOW it describes', async () => {
    expect(
      run.code,
      `the example failed (exit ${run.code}):\n${run.stderr}\n${run.printed.join('\n')}`,
    ).to.equal(0);
    expect(run.stderr).to.equal('');
    // The block prints the new policy's id, then the decision.
    const [policyId, ...rest] = run.printed.at(-1)!.split('\n');
    expect(policyId).to.match(new RegExp(`^pol_${ID}$`));
    const decision = JSON.parse(rest.join('\n'));
    expect(decision.decision).to.equal('ALLOW');
    expect(decision.on_behalf_of).to.have.length(1);
    expect(decision.reasons.map((r: any) => r.code)).to.deep.equal(['POLICY_ALLOW', 'POLICY_ALLOW']);
    expect(decision.trace.links).to.have.length(1);
    expect(decision.trace.links[0]).to.include({ covered: true, delegate_id: decision.principal_id });
    const api = fx.api;
    const list = await api.get(`/v1/delegations?delegate_id=${decision.principal_id}`);
    expect(list.body.data).to.have.length(1);
    expect(list.body.data[0]).to.include({ reason: 'month-end close', status: 'active' });
    const payroll = await api.post('/v1/decisions/evaluate', {
      principal_id: decision.principal_id,
      action: 'read',
      resource: { type: 'database', identifier: 'payroll' },
      on_behalf_of: decision.on_behalf_of,
    });
    expect(payroll.body.reasons.map((r: any) => r.code)).to.deep.equal([
      'DELEGATOR_DENIED',
      'NO_MATCHING_POLICY',
    ]);
    const revoked = await api.delete(`/v1/delegations/${list.body.data[0].id}`);
    expect(revoked.status).to.equal(200);
    const after = await api.post('/v1/decisions/evaluate', {
      principal_id: decision.principal_id,
      action: 'read',
      resource: { type: 'database', identifier: 'invoices' },
      on_behalf_of: decision.on_behalf_of,
    });
    expect(after.body.reasons.map((r: any) => r.code)).to.deep.equal(['NO_DELEGATION']);
  });
});

describe("docs/operations.md: Several instances, after the README's tour", function () {
  this.timeout(60_000);
  const fx = useApp();
  let run: TourRun;

  before(async () => {
    run = await runTour(fx.http.baseUrl, [{ file: 'docs/operations.md', heading: 'Several instances' }]);
  });

  it('runs its example: the write answers a token, and the read sent with it sees the write', async () => {
    expect(
      run.code,
      `the example failed (exit ${run.code}):\n${run.stderr}\n${run.printed.join('\n')}`,
    ).to.equal(0);
    expect(run.stderr).to.equal('');
    const [token, description] = run.printed.at(-1)!.trim().split('\n');
    expect(token).to.match(/^ct1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(description).to.equal('exports invoices nightly');
  });
});
