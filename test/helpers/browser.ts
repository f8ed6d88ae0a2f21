import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type BrowserContext } from 'playwright-core';
import { projectRoot } from '../../src/paths.js';

/** Where browser tests leave their screenshots (ignored by git). */
export const ARTIFACTS = path.join(projectRoot(), 'test', 'artifacts');

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * What Chromium needs to run headless on a build machine without a GPU, sandbox or network.
 * The host rules also stop Chromium's own background requests, which are not page requests and
 * so never reach the request interception below.
 */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
];

export function isLocal(url: string | URL): boolean {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  return ['data:', 'blob:', 'about:'].includes(parsed.protocol) || LOCAL_HOSTS.has(parsed.hostname);
}

export interface LocalBrowser {
  context: BrowserContext;
  /** Requests that completed to anywhere but this machine (none should). */
  leaked: string[];
  close(): Promise<void>;
}

/**
 * The headless Chromium that `@sparticuz/chromium` ships, in a throwaway profile, able to reach
 * this machine only: any other request is aborted before it leaves, and recorded if one did.
 */
export async function launchLocalChromium(viewport: {
  width: number;
  height: number;
}): Promise<LocalBrowser> {
  const profileDir = await mkdtemp(path.join(os.tmpdir(), 'pas-chromium-'));
  let context: BrowserContext;
  try {
    context = await playwright.launchPersistentContext(profileDir, {
      executablePath: await chromium.executablePath(),
      headless: true,
      args: CHROMIUM_FLAGS,
      timeout: 60_000,
      viewport,
      serviceWorkers: 'block',
    });
  } catch (err) {
    await rm(profileDir, { recursive: true, force: true });
    throw err;
  }
  context.setDefaultTimeout(45_000);
  const leaked: string[] = [];
  await context.route(
    (u) => !isLocal(u),
    (route) => route.abort('blockedbyclient'),
  );
  await context.routeWebSocket(
    (u) => !isLocal(u),
    (ws) => ws.close(),
  );
  context.on('requestfinished', (request) => {
    if (!isLocal(request.url())) leaked.push(request.url());
  });
  return {
    context,
    leaked,
    close: async () => {
      await context.close().catch(() => undefined);
      await rm(profileDir, { recursive: true, force: true });
    },
  };
}
