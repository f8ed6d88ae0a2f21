import { existsSync, mkdtempSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page, Response } from 'playwright-core';
import { projectRoot } from '../../src/paths.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { ADMIN, authed, createClient, type TestClient } from '../helpers/auth.js';
import { ARTIFACTS, launchLocalChromium, type LocalBrowser } from '../helpers/browser.js';
import type { HttpClient } from '../helpers/http.js';
import { insertPrincipal } from '../helpers/principals.js';

const BUILT = path.join(projectRoot(), 'dist', 'console', 'index.html');

function requireBuild(): void {
  if (!existsSync(BUILT)) {
    throw new Error('The console is not built: run `npm run build:console` (npm test does it before mocha).');
  }
}

const daysAgo = (days: number): string => new Date(Date.now() - days * 86_400_000).toISOString();

interface Graph {
  ada: string;
  grace: string;
  alan: string;
  katherine: string;
  platform: string;
  engineering: string;
  ledgerPolicy: string;
  triageBot: string;
  ledgerHelper: string;
}

/**
 * A small organisation: Grace manages Ada, who manages Alan, who manages Katherine; Ada and
 * Katherine are in Platform, which is in Engineering; Engineering may read the ledger. Plus an
 * agent whose owner left (still acting for Katherine), an unowned service account and someone not
 * seen for 200 days, and a chain of delegations: triage-bot administers billing for Ada, and
 * ledger-helper for triage-bot.
 */
async function seed(app: TestApp, admin: HttpClient): Promise<Graph> {
  const grace = await insertPrincipal(app, {
    name: 'Grace Hopper',
    attributes: { department: 'executive' },
    lastLogin: daysAgo(1),
  });
  const ada = await insertPrincipal(app, {
    name: 'Ada Lovelace',
    attributes: { department: 'engineering', manager_id: grace.id },
    lastLogin: daysAgo(2),
  });
  const alan = await insertPrincipal(app, {
    name: 'Alan Turing',
    attributes: { department: 'engineering', manager_id: ada.id },
    lastLogin: daysAgo(3),
  });
  const katherine = await insertPrincipal(app, {
    name: 'Katherine Johnson',
    attributes: { department: 'engineering', manager_id: alan.id },
    lastLogin: daysAgo(4),
  });
  await insertPrincipal(app, {
    name: 'Old Timer',
    attributes: { department: 'archive' },
    lastLogin: daysAgo(200),
  });
  const leaver = await insertPrincipal(app, {
    name: 'Lee Ver',
    status: 'deprovisioned',
    lastLogin: daysAgo(30),
  });
  const agent = await admin.post('/v1/principals', {
    type: 'AI_AGENT',
    name: 'deploy-bot',
    attributes: { capabilities: ['deploy'], allowed_tools: ['github'] },
    metadata: { owner: leaver.email! },
  });
  expect(agent.status, agent.text).to.equal(201);
  const unowned = await admin.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: 'legacy-sync' });
  expect(unowned.status, unowned.text).to.equal(201);

  const group = async (name: string, members: string[]): Promise<string> => {
    const created = await admin.post('/v1/groups', { name });
    expect(created.status, created.text).to.equal(201);
    for (const member of members) {
      const added = await admin.put(`/v1/groups/${created.body.id}/members/${member}`);
      expect(added.status, added.text).to.equal(200);
    }
    return created.body.id as string;
  };
  const platform = await group('Platform team', [ada.id, katherine.id]);
  const engineering = await group('Engineering', [platform]);

  const policy = async (body: Record<string, unknown>): Promise<string> => {
    const created = await admin.post('/v1/policies', body);
    expect(created.status, created.text).to.equal(201);
    return created.body.id as string;
  };
  const ledgerPolicy = await policy({
    name: 'engineering-read-ledger',
    effect: 'allow',
    subjects: { groups: [engineering] },
    actions: ['read'],
    resources: [{ type: 'database', identifier: 'ledger-prod' }],
  });
  await policy({
    name: 'ada-admin-billing',
    effect: 'allow',
    subjects: { principals: [ada.id] },
    actions: ['admin'],
    resources: [{ type: 'service', identifier: 'billing' }],
  });
  const registered = await admin.put('/v1/resources/database/ledger-prod', {
    attributes: { environment: 'prod', data_class: 'financial' },
  });
  expect(registered.status, registered.text).to.be.oneOf([200, 201]);
  const patched = await admin.patch(`/v1/principals/${ada.id}`, { attributes: { title: 'VP Engineering' } });
  expect(patched.status, patched.text).to.equal(200);

  const ownedAgent = async (name: string): Promise<string> => {
    const created = await admin.post('/v1/principals', {
      type: 'AI_AGENT',
      name,
      metadata: { owner: grace.id },
    });
    expect(created.status, created.text).to.equal(201);
    return created.body.id as string;
  };
  const triageBot = await ownedAgent('triage-bot');
  const ledgerHelper = await ownedAgent('ledger-helper');
  await policy({
    name: 'agents-admin-billing',
    effect: 'allow',
    subjects: { principals: [triageBot, ledgerHelper] },
    actions: ['admin'],
    resources: [{ type: 'service', identifier: 'billing' }],
  });
  // deploy-bot's owner left: the delegation it holds from Katherine outlives its owner.
  const orphaned = await admin.post('/v1/delegations', {
    delegator_id: katherine.id,
    delegate_id: agent.body.id,
    expires_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    actions: ['deploy'],
  });
  expect(orphaned.status, orphaned.text).to.equal(201);
  for (const [delegator, delegate] of [
    [ada.id, triageBot],
    [triageBot, ledgerHelper],
  ]) {
    const created = await admin.post('/v1/delegations', {
      delegator_id: delegator,
      delegate_id: delegate,
      expires_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      actions: ['admin'],
      resources: [{ type: 'service', identifier: 'billing' }],
      reason: 'billing on-call',
    });
    expect(created.status, created.text).to.equal(201);
  }
  return {
    ada: ada.id,
    grace: grace.id,
    alan: alan.id,
    katherine: katherine.id,
    platform,
    engineering,
    ledgerPolicy,
    triageBot,
    ledgerHelper,
  };
}

describe('analyst console: not built', function () {
  let app: TestApp;
  // An empty directory where the built console would be.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pas-no-console-'));
  const fx = useApp({ consoleDir: dir });
  before(() => {
    app = fx.app;
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 saying how to build it, and the API still works', async () => {
    const res = await app.http.get('/console/principals');
    expect(res.status).to.equal(503);
    expect(res.body.code).to.equal('UNAVAILABLE');
    expect(res.body.detail).to.include('npm run build:console');
    const api = await app.http.get('/readyz');
    expect(api.status).to.equal(200);
  });
});

describe('analyst console: serving', function () {
  let app: TestApp;
  before(requireBuild);
  const fx = useApp();
  before(() => {
    app = fx.app;
  });

  it('serves the page at /console and below it, under a strict Content-Security-Policy', async () => {
    for (const at of ['/console', '/console/', '/console/principals/prn_01JXXXXXXXXXXXXXXXXXXXXXXX']) {
      const res = await app.http.get(at);
      expect(res.status, at).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.text).to.include('<div id="app"></div>');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).to.include("default-src 'none'");
      expect(csp).to.include("script-src 'self'");
      expect(csp).to.include("style-src 'self'");
      expect(csp).to.include("frame-ancestors 'none'");
      expect(csp).not.to.include('unsafe');
      expect(res.headers.get('x-frame-options')).to.equal('DENY');
      expect(res.headers.get('cache-control')).to.equal('no-cache');
    }
  });

  it('has no inline script or style in the page, and serves its hashed assets as immutable', async () => {
    const page = await app.http.get('/console');
    expect(page.text).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page.text).not.to.match(/<style|\sstyle=/);
    const assets = [...page.text.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).to.be.at.least(2);
    for (const asset of assets) {
      const res = await app.http.get(asset, { headers: { 'Accept-Encoding': 'gzip' } });
      expect(res.status, asset).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(res.headers.get('content-type')).to.match(
        asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/,
      );
      const again = await app.http.get(asset, { headers: { 'If-None-Match': res.headers.get('etag')! } });
      expect(again.status).to.equal(304);
    }
  });

  it('answers unknown assets with 404 and other methods with 405, as problems', async () => {
    const missing = await app.http.get('/console/assets/nope-123.js');
    expect(missing.status).to.equal(404);
    expect(missing.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(missing.body.code).to.equal('NOT_FOUND');
    const traversal = await app.http.get('/console/assets/..%2f..%2fpackage.json');
    expect(traversal.status).to.equal(404);
    const posted = await app.http.post('/console', {});
    expect(posted.status).to.equal(405);
    expect(posted.headers.get('allow')).to.equal('GET, HEAD');
  });
});

/** Collects what a page reports going wrong: script errors, console errors (CSP refusals among them). */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  return problems;
}

async function shot(page: Page, name: string, fullPage = false): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `console-${name}.png`), fullPage });
}

/** Moves within the signed-in console as its own links do (a reload would sign out). */
async function goWithin(page: Page, to: string): Promise<void> {
  await page.evaluate(
    `history.pushState(null, '', '/console${to}'); dispatchEvent(new PopStateEvent('popstate'))`,
  );
}

/** Presses Tab (or Shift+Tab) until `predicate`, evaluated in the page, holds; at most 40 times. */
async function tabUntil(page: Page, predicate: string, options: { backwards?: boolean } = {}): Promise<void> {
  for (let i = 0; i < 40; i += 1) {
    await page.keyboard.press(options.backwards ? 'Shift+Tab' : 'Tab');
    if (await page.evaluate<boolean>(`Boolean(${predicate})`)) return;
  }
  throw new Error(`Tab never reached an element where ${predicate}`);
}

const focused = (page: Page): Promise<string | null> =>
  page.evaluate<string | null>('document.activeElement ? document.activeElement.textContent : null');

/** Waits until the first cells of a table's rows read `expected` (in order), for up to 15 s. */
async function rowsRead(page: Page, rows: string, expected: string[]): Promise<void> {
  let seen: string[] = [];
  for (const until = Date.now() + 15_000; Date.now() < until;) {
    seen = await page.locator(`${rows} td:first-child`).allTextContents();
    if (JSON.stringify(seen) === JSON.stringify(expected)) return;
    await page.waitForTimeout(100);
  }
  expect(seen, rows).to.deep.equal(expected);
}

async function signIn(page: Page, client: TestClient): Promise<void> {
  await page.getByLabel('Client id').fill(client.id);
  await page.getByLabel('Client secret').fill(client.secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

describe('analyst console in a browser', function () {
  // Chromium's first start unpacks it; each step below has its own, shorter limit.
  this.timeout(240_000);
  let app: TestApp;
  let browser: LocalBrowser | undefined;
  let graph: Graph;
  let reader: TestClient;
  let page: Page;
  let problems: string[];
  let base: string;
  const tokens: { access_token: string; refresh_token: string }[] = [];
  const refreshes: Response[] = [];

  before(async () => {
    requireBuild();
    // Short-lived tokens, so that the console's refresh happens while the test runs.
    app = await startTestApp({ env: { ACCESS_TOKEN_TTL_S: '30' } });
    base = app.http.baseUrl;
    const admin = await authed(app);
    graph = await seed(app, admin);
    reader = await createClient(app, ['principals:read'], 'console-reader');
    await mkdir(ARTIFACTS, { recursive: true });
    browser = await launchLocalChromium({ width: 1280, height: 800 });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    problems = watch(page);
    page.on('response', (res) => {
      const url = new URL(res.url());
      if (url.pathname === '/v1/auth/token' && res.status() === 200) {
        void res.json().then((body: { access_token: string; refresh_token: string }) => tokens.push(body));
      }
      if (url.pathname === '/v1/auth/refresh') refreshes.push(res);
    });
  });
  after(async () => {
    await browser?.close();
    await app.close();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && page) {
      await shot(page, `failure-${this.currentTest.title.replace(/\W+/g, '-').slice(0, 60)}`, true).catch(
        () => undefined,
      );
    }
  });

  it('signs in with client credentials, greys out what the scopes do not allow, and revokes on sign-out', async () => {
    const response = await page.goto(`${base}/console`);
    expect(response?.headers()['content-security-policy']).to.include("script-src 'self'");
    await shot(page, 'sign-in');

    const wrong = { id: reader.id, secret: 'not-the-secret' };
    await page.getByLabel('Client id').fill(wrong.id);
    await page.getByLabel('Client secret').fill(wrong.secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
    problems.length = 0; // the refused sign-in is an expected 401 in the console log

    await signIn(page, reader);
    await page.getByRole('heading', { name: 'Identity graph at a glance' }).waitFor();
    const whatIf = page.locator('.tile.off', { hasText: 'Policy what-if' });
    await whatIf.waitFor();
    expect(await whatIf.textContent()).to.include('policies:read');
    expect(await page.locator('.tile.off', { hasText: 'Orphaned identities' }).textContent()).to.include(
      'audit:reports',
    );
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.locator('[aria-disabled="true"]', { hasText: 'Decisions' }).count()).to.equal(1);
    expect(await nav.getByRole('link', { name: 'Search' }).count()).to.equal(1);
    // The token lives in memory only.
    const stored = await page.evaluate(
      '({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })',
    );
    expect(stored).to.deep.equal({ local: 0, session: 0, cookie: '' });
    await shot(page, 'scopes-greyed');

    // A page that needs a missing scope says why instead of failing.
    await page.goto(`${base}/console/decisions`);
    await page.getByLabel('Client id').waitFor(); // a reload forgot the token
    await signIn(page, reader);
    await goWithin(page, '/decisions');
    expect(await page.locator('[data-gated="decisions"]').textContent()).to.include('decisions:evaluate');

    const issued = tokens.at(-1)!;
    expect(issued, 'the token response was seen').to.not.equal(undefined);
    const revoked = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/auth/revoke');
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect((await revoked).status()).to.equal(200);
    await page.getByLabel('Client id').waitFor();
    const after = await app.http.get('/v1/principals', { token: issued.access_token });
    expect(after.status, 'the access token of a signed-out session').to.equal(401);
    const reuse = await app.http.post('/v1/auth/refresh', { refresh_token: issued.refresh_token });
    expect(reuse.status, 'the refresh token of a signed-out session').to.equal(400);
  });

  it('searches principals with the form, sorts and opens one', async () => {
    await signIn(page, ADMIN);
    // Signing in again keeps the page the console was on.
    await page.getByRole('heading', { name: 'Decisions explorer' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Home' }).click();
    const census = page.getByRole('list', { name: 'Principals by type' });
    await census.getByText('People').waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Search' }).click();
    await page.getByRole('heading', { name: 'Search principals' }).waitFor();
    await page.getByRole('checkbox', { name: 'User', exact: true }).check();
    await page.getByRole('button', { name: '+ Attribute condition' }).click();
    await page.getByLabel('Attribute 1 key').fill('department');
    await page.getByLabel('Attribute 1 value').fill('engineering');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.locator('section[aria-labelledby="results-title"]');
    const rows = 'section[aria-labelledby="results-title"] tbody tr';
    // Newest first by default.
    await rowsRead(page, rows, ['Katherine Johnson', 'Alan Turing', 'Ada Lovelace']);
    const sent = await results.locator('.query-sent pre').textContent();
    expect(JSON.parse(sent!).query).to.deep.equal({
      type: ['USER'],
      attributes: { department: { $eq: 'engineering' } },
    });

    await results.getByRole('button', { name: 'Name' }).click();
    await results.locator('th[aria-sort="ascending"]', { hasText: 'Name' }).waitFor();
    await rowsRead(page, rows, ['Ada Lovelace', 'Alan Turing', 'Katherine Johnson']);
    await results.getByRole('button', { name: 'Name' }).click();
    await results.locator('th[aria-sort="descending"]', { hasText: 'Name' }).waitFor();
    await rowsRead(page, rows, ['Katherine Johnson', 'Alan Turing', 'Ada Lovelace']);
    await shot(page, 'search');

    await results.getByRole('link', { name: 'Ada Lovelace' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ada Lovelace' }).waitFor();
    expect(new URL(page.url()).pathname).to.equal(`/console/principals/${graph.ada}`);
  });

  it("shows a principal's record, risk, relationship graph, access with membership paths and audit trail", async () => {
    await page.locator('#record').getByText(graph.ada).waitFor();
    expect(await page.locator('#record').textContent()).to.include('VP Engineering');
    await page.locator('#risk meter').waitFor();

    // The graph: Ada, her manager, two levels of reports and two levels of groups.
    const canvas = page.locator('.graph-canvas[data-nodes="6"][data-ready="true"]');
    await canvas.waitFor();
    expect(await canvas.getAttribute('data-edges')).to.equal('5');
    await canvas.locator('canvas').first().waitFor();
    const list = page.locator('#graph .relationships');
    expect(await list.textContent()).to.include('Manager: Grace Hopper');
    expect(await list.textContent()).to.include('Reports at depth 2 (1): Katherine Johnson');
    expect(await list.textContent()).to.include('Groups at depth 2 (1): Engineering');

    const access = page.locator('#access');
    const ledger = access.locator('tbody tr', { hasText: 'database:ledger-prod' });
    await ledger.waitFor();
    expect(await ledger.textContent()).to.include('engineering-read-ledger');
    expect(await ledger.locator('.path').textContent()).to.equal(
      'Ada Lovelace → Platform team → Engineering',
    );
    const billing = access.locator('tbody tr', { hasText: 'service:billing' });
    expect(await billing.textContent()).to.include('names it directly');

    const audit = page.locator('#audit');
    await audit.getByText('principal.updated').waitFor();
    expect(await audit.textContent()).to.include('principal.created');
    await shot(page, 'principal', true);

    // A click on a node opens that person: the manager sits straight above Ada.
    const box = (await canvas.boundingBox())!;
    expect(await canvas.locator('canvas').count()).to.be.greaterThan(0);
    expect(box.width).to.be.greaterThan(600);
  });

  it('lists who can reach a resource (reverse lookup)', async () => {
    await page.locator('#access').getByRole('link', { name: 'database:ledger-prod' }).click();
    await page.getByRole('heading', { name: /Who can reach/ }).waitFor();
    const who = page.locator('#who');
    await who.getByRole('link', { name: 'Katherine Johnson' }).waitFor();
    const rows = await who.locator('tbody tr td:first-child a').allTextContents();
    expect(rows).to.deep.equal(['Ada Lovelace', 'Katherine Johnson']);
    expect(await who.textContent()).to.include(graph.ledgerPolicy);
    expect(await page.locator('dl.facts').textContent()).to.include('financial');
    await shot(page, 'resource');
  });

  it('runs a policy what-if from its JSON and shows the blast radius as a diff', async () => {
    await page.locator('#who').getByRole('link', { name: graph.ledgerPolicy }).first().click();
    await page.getByRole('heading', { name: 'Policy what-if: engineering-read-ledger' }).waitFor();
    const editor = page.getByLabel('Policy JSON');
    const current = JSON.parse(await editor.inputValue());
    expect(current).to.include({ name: 'engineering-read-ledger', effect: 'allow' });

    await editor.fill('{ "name": "engineering-read-ledger", ');
    await page.getByText(/Not valid JSON/).waitFor();
    expect(await page.getByRole('button', { name: 'Simulate this change' }).isDisabled()).to.be.true;
    await editor.fill(JSON.stringify({ ...current, effect: 'permit' }, null, 2));
    await page.getByText('/effect must be "allow" or "deny".').waitFor();

    // Widen it to writes, and from Engineering to Platform team alone plus Alan.
    const proposed = {
      ...current,
      subjects: { groups: [graph.platform], principals: [graph.alan] },
      actions: ['read', 'write'],
    };
    await editor.fill(JSON.stringify(proposed, null, 2));
    await page.getByText('Valid policy JSON.').waitFor();
    await page.getByRole('button', { name: 'Simulate this change' }).click();
    const blast = page.locator('[data-simulated="change"]');
    await blast.waitFor();
    const alan = blast.locator('.blast-principal', { hasText: 'Alan Turing' });
    await alan.waitFor();
    expect(await alan.locator('span.gained').allTextContents()).to.deep.equal(['+ read', '+ write']);
    const ada = blast.locator('.blast-principal', { hasText: 'Ada Lovelace' });
    await ada.waitFor();
    expect(await ada.locator('span.gained').allTextContents()).to.deep.equal(['+ write']);
    expect(await ada.locator('span.lost').count()).to.equal(0);
    expect(await blast.locator('.summary').textContent()).to.include('3 principals affected');
    await shot(page, 'what-if', true);

    await page.getByRole('button', { name: 'Simulate deleting it' }).click();
    const deletion = page.locator('[data-simulated="deletion"]');
    await deletion.waitFor();
    const katherine = deletion.locator('.blast-principal', { hasText: 'Katherine Johnson' });
    await katherine.waitFor();
    const lost = katherine.locator('span.lost');
    expect(await lost.allTextContents()).to.deep.equal(['− read']);

    // A proposal the service refuses comes back with its pointer.
    await editor.fill(JSON.stringify({ ...current, actions: ['Not An Action'] }, null, 2));
    await page.getByRole('button', { name: 'Simulate this change' }).click();
    const problem = page.getByRole('alert').filter({ hasText: 'Simulation' });
    await problem.waitFor();
    expect(await problem.textContent()).to.include('/policy/actions/0');
    problems.length = 0; // the refused proposal is an expected 400 in the console log
  });

  it('evaluates a request with explain and shows the trace', async () => {
    await page.goto(`${base}/console`);
    await signIn(page, ADMIN);
    await goWithin(page, `/principals/${graph.ada}`);
    await page.getByRole('link', { name: 'Evaluate a request' }).click();
    await page.getByRole('heading', { name: 'Decisions explorer' }).waitFor();
    expect(await page.getByLabel('Principal id').inputValue()).to.equal(graph.ada);
    await page.getByLabel('Action').fill('read');
    await page.getByLabel('Resource type').fill('database');
    await page.getByLabel('Resource identifier').fill('ledger-prod');
    await page.getByRole('button', { name: 'Evaluate with explanation' }).click();
    const verdict = page.locator('.verdict');
    await verdict.waitFor();
    expect(await verdict.textContent()).to.include('ALLOW');
    const trace = page.locator('table.trace');
    expect(await trace.textContent()).to.include('engineering-read-ledger');
    expect(await trace.locator('.path').first().textContent()).to.equal(
      'Ada Lovelace → Platform team → Engineering',
    );
    await shot(page, 'decision', true);

    await page.getByLabel('Action').fill('delete');
    await page.getByRole('button', { name: 'Evaluate with explanation' }).click();
    await page.locator('.verdict.deny').waitFor();
    expect(await page.locator('.reasons').textContent()).to.include('NO_MATCHING_POLICY');
  });

  it('says why a request was denied, and tries a remedy in the what-if and then applies one', async () => {
    // Alan is in no group: Engineering's ledger policy comes close but does not select him.
    const request = `principal_id=${graph.alan}&action=read&type=database&identifier=ledger-prod`;
    await goWithin(page, `/decisions?${request}`);
    await page.getByRole('heading', { name: 'Decisions explorer' }).waitFor();
    await page.getByRole('button', { name: 'Evaluate with explanation' }).click();
    await page.locator('.verdict.deny').waitFor();
    const whyNot = page.locator('#why-not');
    await whyNot.getByRole('heading', { name: 'Why not?' }).waitFor();
    const miss = whyNot.locator('table.near-misses tbody tr[data-kind="not_subject"]');
    expect(await miss.count()).to.equal(1);
    expect(await miss.getByRole('link', { name: 'engineering-read-ledger' }).getAttribute('href')).to.equal(
      `/console/what-if?policy=${graph.ledgerPolicy}`,
    );
    expect(await miss.textContent())
      .to.include('Does not select this principal')
      .and.include(graph.alan);

    // In the API's order: being added to the policy, then joining its group; neither grants more.
    const remedies = whyNot.locator('ol.remedies > li');
    expect(
      await remedies.evaluateAll((items) => items.map((i) => i.getAttribute('data-kind'))),
    ).to.deep.equal(['add_to_policy', 'add_to_group']);
    const toPolicy = remedies.nth(0);
    expect(await toPolicy.textContent())
      .to.include('engineering-read-ledger')
      .and.include(`add ${graph.alan} to the principals of policy engineering-read-ledger`)
      .and.include('also grants 0 other principals, 0 other resources');
    const toGroup = remedies.nth(1);
    expect(await toGroup.locator('pre.api-call').textContent()).to.equal(
      `PUT /v1/groups/${graph.engineering}/members/${graph.alan}`,
    );
    await shot(page, 'why-not', true);

    // The keyboard reaches the remedy's button, which opens the what-if with the patch applied.
    const tryIt = toPolicy.getByRole('button', { name: 'Try in what-if' });
    await tryIt.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Policy what-if: engineering-read-ledger' }).waitFor();
    const address = new URL(page.url());
    expect(address.searchParams.get('policy')).to.equal(graph.ledgerPolicy);
    expect(JSON.parse(address.searchParams.get('patch')!)).to.deep.equal({
      subjects: { principals: [graph.alan], groups: [graph.engineering] },
    });
    expect(await page.locator('.proposal').textContent()).to.include('A proposed change is applied');
    const editor = page.getByLabel('Policy JSON');
    const body = JSON.parse(await editor.inputValue());
    expect(body.subjects).to.deep.equal({ principals: [graph.alan], groups: [graph.engineering] });
    expect(body).to.include({ name: 'engineering-read-ledger', effect: 'allow' });
    await page.getByText('Valid policy JSON.').waitFor();
    await page.getByRole('button', { name: 'Simulate this change' }).click();
    const blast = page.locator('[data-simulated="change"]');
    const alan = blast.locator('.blast-principal', { hasText: 'Alan Turing' });
    await alan.waitFor();
    expect(await alan.locator('span.gained').allTextContents()).to.deep.equal(['+ read']);
    expect(await blast.locator('.summary').textContent()).to.include('1 principals affected');
    await shot(page, 'why-not-what-if', true);

    // Joining the group is a write: asked first, then made, and the request is evaluated again.
    await goWithin(page, `/decisions?${request}`);
    await page.getByRole('button', { name: 'Evaluate with explanation' }).click();
    const apply = page
      .locator('#why-not li[data-kind="add_to_group"]')
      .getByRole('button', { name: 'Apply…' });
    await apply.click();
    const confirm = page.getByRole('group', { name: 'Confirm adding to the group' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect(await confirm.count()).to.equal(0);
    // Focus goes back to where it was, and then onto the question, so Enter answers it.
    await page.waitForFunction('document.activeElement?.textContent === "Apply…"', undefined, {
      timeout: 5_000,
    });
    await apply.click();
    await page.waitForFunction('document.activeElement?.textContent === "Add to the group"', undefined, {
      timeout: 5_000,
    });
    await page.keyboard.press('Enter');
    await page.locator('.verdict.allow').waitFor();
    expect(await page.locator('p.notice[role="status"]').textContent()).to.include(
      `Added ${graph.alan} to Engineering.`,
    );
    expect(await page.locator('#why-not').count()).to.equal(0);
    const admin = await authed(app);
    const members = await admin.get(`/v1/groups/${graph.engineering}/members`);
    expect(JSON.stringify(members.body)).to.include(graph.alan);
    expect(problems, 'errors in the page').to.deep.equal([]);
  });

  it("shows an agent's delegations with their chain, and a decision's delegation links and verdicts", async () => {
    await goWithin(page, `/principals/${graph.ledgerHelper}`);
    await page.getByRole('heading', { level: 1, name: 'ledger-helper' }).waitFor();
    const delegations = page.locator('#delegations');
    const received = delegations.locator('table.delegations').nth(1).locator('tbody tr[data-delegation]');
    await received.first().waitFor();
    expect(await received.count()).to.equal(1);
    expect(await received.locator('.chain').textContent()).to.equal(
      'Ada Lovelace → triage-bot → ledger-helper',
    );
    const row = await received.textContent();
    expect(row).to.include('applies').and.include('admin').and.include('service:billing');
    expect(await delegations.locator('table.delegations').first().textContent()).to.include(
      'It delegates to nobody.',
    );
    // Each principal of the chain but this one opens its own page.
    expect(await received.getByRole('link', { name: 'Ada Lovelace' }).getAttribute('href')).to.equal(
      `/console/principals/${graph.ada}`,
    );
    await shot(page, 'delegations', true);

    await received.getByRole('link', { name: 'triage-bot' }).click();
    await page.getByRole('heading', { level: 1, name: 'triage-bot' }).waitFor();
    const tables = page.locator('#delegations table.delegations');
    const given = tables.nth(0).locator('tbody tr[data-delegation]');
    await given.first().waitFor();
    expect(await given.locator('.chain').allTextContents()).to.deep.equal([
      'Ada Lovelace → triage-bot → ledger-helper',
    ]);
    expect(await tables.nth(1).locator('tbody tr[data-delegation] .chain').allTextContents()).to.deep.equal([
      'Ada Lovelace → triage-bot',
    ]);

    // ledger-helper administers billing for Ada, through triage-bot: every link is covered.
    await goWithin(page, `/principals/${graph.ledgerHelper}`);
    await page.getByRole('link', { name: 'Evaluate a request' }).click();
    await page.getByRole('heading', { name: 'Decisions explorer' }).waitFor();
    await page.getByLabel('Action').fill('admin');
    await page.getByLabel('Resource type').fill('service');
    await page.getByLabel('Resource identifier').fill('billing');
    await page.getByLabel('On behalf of (optional)').fill(`${graph.ada}, ${graph.triageBot}`);
    await page.getByRole('button', { name: 'Evaluate with explanation' }).click();
    await page.locator('.verdict.allow').waitFor();
    const links = page.locator('table.links tbody tr');
    await links.first().waitFor();
    expect(await links.count()).to.equal(2);
    await links.first().getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    // Each link names both its principals once their names have loaded.
    await links.nth(0).filter({ hasText: 'triage-bot' }).waitFor();
    await links.nth(1).filter({ hasText: 'ledger-helper' }).waitFor();
    expect(await links.nth(0).textContent())
      .to.include('Ada Lovelace')
      .and.include('triage-bot');
    expect(await links.nth(1).textContent())
      .to.include('triage-bot')
      .and.include('ledger-helper');
    for (const link of await links.all()) expect(await link.textContent()).to.include('covered');
    expect(await page.locator('table.links td code').allTextContents()).to.have.length(2);
    const verdicts = page.locator('table.verdicts tbody tr');
    await verdicts.nth(2).getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    expect(await verdicts.allTextContents()).to.have.length(3);
    for (const verdict of await verdicts.all()) expect(await verdict.textContent()).to.include('allowed');
    await shot(page, 'decision-chain', true);

    // Straight for Ada, nothing delegates to ledger-helper: the link is not covered.
    await page.getByLabel('On behalf of (optional)').fill(graph.ada);
    await page.getByRole('button', { name: 'Evaluate with explanation' }).click();
    await page.locator('.verdict.deny').waitFor();
    expect(await page.locator('.reasons').textContent()).to.include('NO_DELEGATION');
    const missing = page.locator('table.links tbody tr');
    expect(await missing.count()).to.equal(1);
    expect(await missing.textContent()).to.include('not covered');
  });

  it('lists orphaned and dormant identities one click from home', async () => {
    await page.getByRole('link', { name: 'Home' }).click();
    await page.getByRole('link', { name: 'Orphaned identities' }).click();
    const rows = page.locator('section[aria-labelledby="finding-rows"]');
    await rows.waitFor();
    const orphans = await rows.locator('tbody tr td:first-child').allTextContents();
    expect(orphans.sort()).to.deep.equal(['deploy-bot', 'legacy-sync']);
    const deployBot = await rows.locator('tbody tr', { hasText: 'deploy-bot' }).textContent();
    expect(deployBot).to.include('deprovisioned');
    // Whom it acts for, with its owner gone.
    expect(deployBot).to.include('Katherine Johnson').and.include('orphaned delegation');
    await shot(page, 'orphaned');

    await page.getByRole('link', { name: 'Home' }).click();
    await page.getByRole('button', { name: 'Show dormant' }).click();
    await page.getByRole('heading', { name: 'Dormant identities: not seen for 90 days' }).waitFor();
    await rows.waitFor();
    const dormant = await rows.locator('tbody tr td:first-child').allTextContents();
    expect(dormant).to.include('Old Timer');
    expect(dormant).not.to.include('Ada Lovelace');
    await shot(page, 'dormant');
  });

  it('shows the access history of a principal and of a resource, and access as of a date', async () => {
    const admin = await authed(app);
    const mary = await insertPrincipal(app, { name: 'Mary Jackson', lastLogin: daysAgo(1) });
    const group = await admin.post('/v1/groups', { name: 'Archive readers' });
    expect(group.status, group.text).to.equal(201);
    const policy = await admin.post('/v1/policies', {
      name: 'archive-readers-read-minutes',
      effect: 'allow',
      subjects: { groups: [group.body.id] },
      actions: ['read'],
      resources: [{ type: 'document', identifier: 'board-minutes' }],
    });
    expect(policy.status, policy.text).to.equal(201);
    const changes = async (): Promise<any[]> => {
      const res = await admin.get(`/v1/access-changes?principal_id=${mary.id}`);
      expect(res.status, res.text).to.equal(200);
      return res.body.data;
    };
    // Seconds apart, so that the picker (to the second) can name an instant between them.
    await page.waitForTimeout(2_100);
    const added = await admin.put(`/v1/groups/${group.body.id}/members/${mary.id}`);
    expect(added.status, added.text).to.equal(200);
    const [gain] = await changes();
    expect(gain.actions_gained).to.deep.equal(['read']);
    await page.waitForTimeout(2_100);
    const removed = await admin.delete(`/v1/groups/${group.body.id}/members/${mary.id}`);
    expect(removed.status, removed.text).to.be.within(200, 204);
    const [, loss] = await changes();
    expect(loss.actions_lost).to.deep.equal(['read']);
    /** A `datetime-local` value in UTC, to the second (the input leaves out zero seconds). */
    const picked = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace(/:00$/, '');
    const second = Math.floor(Date.parse(gain.at) / 1000) * 1000;
    const between = picked(second + 1000);
    const before = picked(second - 1000);

    await goWithin(page, `/principals/${mary.id}`);
    await page.getByRole('heading', { level: 1, name: 'Mary Jackson' }).waitFor();
    await page
      .getByRole('navigation', { name: 'On this page' })
      .getByRole('link', { name: 'Access history' })
      .waitFor();
    const history = page.locator('#history');
    const rows = history.locator('tbody tr[data-change]');
    await rows.nth(1).waitFor();
    expect(await rows.count()).to.equal(2);
    // Newest first: the loss, then the gain, each with its cause, its actor and its policy.
    const [lost, gained] = [rows.nth(0), rows.nth(1)];
    expect(await lost.locator('span.lost').allTextContents()).to.deep.equal(['− read']);
    expect(await lost.locator('span.gained').count()).to.equal(0);
    expect(await lost.textContent())
      .to.include('document:board-minutes')
      .and.include('group.member_removed')
      .and.include(loss.cause.event_id)
      .and.include(ADMIN.id);
    expect(await gained.locator('span.gained').allTextContents()).to.deep.equal(['+ read']);
    expect(await gained.textContent())
      .to.include('group.member_added')
      .and.include(gain.cause.event_id)
      .and.include(ADMIN.id);
    expect(
      await gained.getByRole('link', { name: 'archive-readers-read-minutes' }).getAttribute('href'),
    ).to.equal(`/console/what-if?policy=${policy.body.id}`);
    expect(await gained.locator('.path').textContent()).to.equal('Mary Jackson → Archive readers');
    await shot(page, 'access-history', true);

    // As of an instant between the two, Mary reads the minutes, granted by her joining the group.
    const access = page.locator('#access');
    await access.getByText('No access.').waitFor();
    const asOf = access.getByLabel('As of (UTC)');
    await asOf.fill(between);
    await access.getByRole('button', { name: 'Show' }).click();
    await access.locator('.as-of-note').waitFor();
    expect(await access.locator('.as-of-note').textContent()).to.include(
      `${new Date(second + 1000).toISOString().replace('T', ' ').slice(0, 19)} UTC`,
    );
    const minutes = access.locator('tbody tr', { hasText: 'document:board-minutes' });
    await minutes.waitFor();
    expect(await minutes.locator('td').nth(1).textContent()).to.equal('read');
    expect(await minutes.textContent()).to.include('archive-readers-read-minutes');
    const grantedBy = minutes.locator('.granted-by-event');
    expect(await grantedBy.textContent())
      .to.include('group.member_added')
      .and.include(gain.cause.event_id)
      .and.include(ADMIN.id);
    await shot(page, 'access-as-of', true);

    // Before she joined: nothing.
    await asOf.fill(before);
    await access.getByRole('button', { name: 'Show' }).click();
    await access.getByText(/^No access as of /).waitFor();
    expect(await access.locator('tbody tr', { hasText: 'document:board-minutes' }).count()).to.equal(0);

    // Before the history's horizon: the service's reason, in the panel.
    await asOf.fill('2001-01-01T00:00');
    await access.getByRole('button', { name: 'Show' }).click();
    const refused = access.getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent())
      .to.include('400')
      .and.include('access is known from');
    problems.length = 0; // the refused instant is an expected 400 in the console log

    // Cleared: access now, which she no longer has.
    await access.getByRole('button', { name: 'Clear' }).click();
    await access.getByText('No access.').waitFor();
    expect(await access.locator('.as-of-note').count()).to.equal(0);
    expect(await asOf.inputValue()).to.equal('');

    // The resource's page: the same two changes, naming Mary; and who could read it in between.
    await gained.getByRole('link', { name: 'document:board-minutes' }).click();
    await page.getByRole('heading', { name: /Who can reach/ }).waitFor();
    const resourceRows = page.locator('#history tbody tr[data-change]');
    await resourceRows.nth(1).waitFor();
    expect(
      await resourceRows.evaluateAll((trs) =>
        trs.map((tr) =>
          [...tr.querySelectorAll('td:nth-child(2), td:nth-child(3), td:nth-child(4) code.event-type')].map(
            (td) => td.textContent,
          ),
        ),
      ),
    ).to.deep.equal([
      ['Mary Jackson USER', '− read', 'group.member_removed'],
      ['Mary Jackson USER', '+ read', 'group.member_added'],
    ]);
    const who = page.locator('#who');
    await who.getByText('Nobody can access it.').waitFor();
    await who.getByLabel('As of (UTC)').fill(between);
    await who.getByRole('button', { name: 'Show' }).click();
    await who.locator('.as-of-note').waitFor();
    await who.getByRole('link', { name: 'Mary Jackson' }).waitFor();
    expect(await who.locator('tbody tr td:first-child a').allTextContents()).to.deep.equal(['Mary Jackson']);
    await shot(page, 'resource-history', true);
    expect(problems, 'errors in the page').to.deep.equal([]);
  });

  it('is keyboard navigable: sign in, skip to content, find a principal and open it', async () => {
    await page.goto(`${base}/console`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.name')).to.equal('client_id');
    await page.keyboard.type(ADMIN.id);
    await page.keyboard.press('Tab');
    await page.keyboard.type(ADMIN.secret);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Identity graph at a glance' }).waitFor();

    // The page's heading has the focus; the navigation and the skip link are behind it.
    expect(await focused(page)).to.equal('Identity graph at a glance');
    await tabUntil(page, 'document.activeElement.textContent === "Skip to content"', { backwards: true });
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).to.equal('main');
    await tabUntil(page, 'document.activeElement.placeholder === "Ada, deploy-bot, prn_…"');
    await page.keyboard.type('Lovelace');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Search principals' }).waitFor();
    await page.getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    await tabUntil(page, 'document.activeElement.textContent === "Ada Lovelace"');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Ada Lovelace' }).waitFor();
    // The new page's heading takes the focus, as a page load puts the reader at its top.
    expect(await page.evaluate('document.activeElement.tagName')).to.equal('H1');
  });

  it('returns to sign-in, saying why, when its session is revoked elsewhere', async () => {
    const temporary = await createClient(app, ['principals:read'], 'console-temporary');
    await page.goto(`${base}/console`);
    await signIn(page, temporary);
    await page.getByRole('heading', { name: 'Identity graph at a glance' }).waitFor();
    // Deleting the client revokes its tokens: the next call is refused, and so is the refresh.
    const admin = await authed(app);
    expect((await admin.delete(`/v1/clients/${temporary.id}`)).status).to.equal(200);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Search' }).click();
    await page.getByText('Your session ended: sign in again.').waitFor();
    await page.getByLabel('Client id').waitFor();
    problems.length = 0; // the refused call and refresh are expected 401 and 400 in the console log
    refreshes.length = 0; // and so is the refused refresh
    await signIn(page, ADMIN);
  });

  it('refreshes its token before it expires and keeps working', async () => {
    if (refreshes.length === 0) {
      await page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/auth/refresh', {
        timeout: 40_000,
      });
    }
    expect(refreshes.length).to.be.at.least(1);
    expect(refreshes.every((r) => r.status() === 200)).to.be.true;
    await page.getByRole('link', { name: 'Home' }).click();
    await page.getByRole('list', { name: 'Principals by type' }).getByText('People').waitFor();
    expect(problems, 'errors in the page').to.deep.equal([]);
    expect(browser!.leaked, 'requests that left this machine').to.deep.equal([]);
  });
});
