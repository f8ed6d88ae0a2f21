import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { newId } from '../../src/ids.js';
import { BulkLoader, type SeedPrincipal } from '../../src/seed/bulk.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { ARTIFACTS, isLocal, launchLocalChromium, type LocalBrowser } from '../helpers/browser.js';
import { cypher } from '../helpers/db.js';
import { type PrincipalType } from '../../src/vocabulary/principals.js';

const QUERY = 'MATCH (p:Principal) RETURN count(p)';

/** Where the suite's Neo4j serves the Browser: set by the global setup for a Neo4j it started. */
function browserUrl(): string {
  const url = process.env['NEO4J_BROWSER_URL'];
  if (!url) {
    throw new Error(
      `No Neo4j Browser URL: the suite runs against NEO4J_URI=${process.env['NEO4J_URI'] ?? ''}, which it did ` +
        'not start itself. Set NEO4J_BROWSER_URL to the Browser of that Neo4j (for example ' +
        'http://127.0.0.1:7474/browser/), or unset NEO4J_URI so that the suite starts one that serves it.',
    );
  }
  return url;
}

const TYPES: PrincipalType[] = ['USER', 'SERVICE_ACCOUNT', 'API_KEY', 'AI_AGENT'];

function somePrincipals(count: number): SeedPrincipal[] {
  return Array.from({ length: count }, (_, i) => {
    const type = TYPES[i % TYPES.length]!;
    return {
      id: newId('principal'),
      type,
      name: `Browser Check ${i + 1}`,
      ...(type === 'USER' ? { email: `browser.check.${i + 1}@example.com` } : {}),
      attributes: { team: 'security' },
      metadata: {},
      createdAt: '2026-01-05T09:00:00.000Z',
    };
  });
}

/** Fills the Browser's connect form and waits until the session is connected. */
async function connect(page: Page, boltUri: string): Promise<void> {
  const bolt = new URL(boltUri);
  await page.getByTestId('bolt-scheme-select').selectOption(`${bolt.protocol}//`);
  await page.getByTestId('boltaddress').fill(bolt.host);
  const password = process.env['NEO4J_PASSWORD'] ?? '';
  if (password === '') {
    await page.getByTestId('authenticationMethod').selectOption('NO_AUTH');
  } else {
    await page.getByTestId('authenticationMethod').selectOption('NATIVE');
    await page.getByTestId('username').fill(process.env['NEO4J_USER'] ?? 'neo4j');
    await page.getByTestId('password').fill(password);
  }
  await page.getByTestId('connect').click();
  // Once connected, the editor's prompt names the database it sends queries to.
  const database = process.env['NEO4J_DATABASE'] || 'neo4j';
  await page
    .locator('#monaco-main-editor .line-numbers')
    .filter({ hasText: `${database}$` })
    .waitFor();
}

/** Runs a query from the Browser's editor and reads the single value of its result table. */
async function runForValue(page: Page, query: string): Promise<string> {
  await page.getByTestId('activeEditor').click();
  await page.keyboard.type(query);
  await page.getByTestId('editor-Run').click();
  const frame = page
    .getByTestId('frame')
    .filter({ has: page.getByTestId('frameCommand').filter({ hasText: query }) });
  const cell = frame.locator('td[role="cell"]');
  await cell
    .or(frame.getByText(/\w+Error\b/))
    .first()
    .waitFor();
  if ((await cell.count()) === 0) throw new Error(`the query failed: ${await frame.innerText()}`);
  return (await cell.textContent()) ?? '';
}

describe('Neo4j Browser served by the suite Neo4j', function () {
  // Chromium's first start unpacks it (a few seconds); the Browser then needs a while to load and
  // connect on a busy machine. Every step below has its own, shorter limit.
  this.timeout(180_000);
  let app: TestApp;
  let browser: LocalBrowser | undefined;

  const fx = useApp();

  before(async () => {
    app = fx.app;
  });
  after(async () => {
    await browser?.close();
  });

  it('connects with the Bolt URI and counts the principals in the graph', async () => {
    const url = browserUrl();
    const boltUri = process.env['NEO4J_URI']!;
    for (const target of [url, boltUri]) {
      expect(isLocal(target), `${target} is not on this machine; the Browser test talks to 127.0.0.1 only`).to
        .be.true;
    }

    await new BulkLoader(app.runtime.db).principals(somePrincipals(7));
    const [row] = await cypher(app.runtime.db, 'MATCH (p:Principal) RETURN count(p) AS n');
    const inGraph = row!['n'] as number;
    expect(inGraph).to.equal(7);

    // The Browser asks for web fonts, error reporting and analytics on the internet: none of it
    // may leave this machine, and none of it is needed to query the graph.
    browser = await launchLocalChromium({ width: 1400, height: 900 });
    const { context, leaked } = browser;
    const page = context.pages()[0] ?? (await context.newPage());
    await mkdir(ARTIFACTS, { recursive: true });
    let value: string;
    try {
      await page.goto(url);
      await connect(page, boltUri);
      value = await runForValue(page, QUERY);
    } catch (err) {
      await page
        .screenshot({ path: path.join(ARTIFACTS, 'neo4j-browser-failure.png') })
        .catch(() => undefined);
      throw new Error(
        `Neo4j Browser at ${url}: ${(err as Error).message} (screenshot: test/artifacts/neo4j-browser-failure.png)`,
        { cause: err },
      );
    }
    await page.screenshot({ path: path.join(ARTIFACTS, 'neo4j-browser.png') });

    expect(Number(value.trim()), `the Browser showed "${value}"`).to.equal(inGraph);
    expect(leaked, 'requests that left this machine').to.deep.equal([]);
  });
});
