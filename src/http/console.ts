import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Middleware } from 'koa';
import { HttpError } from './problems.js';
import { stateOf } from './state.js';

/** Where the analyst console is served; its front-end is built with this base (console/vite.config.ts). */
export const CONSOLE_BASE = '/console';

/**
 * The console's policy: its own scripts, styles and API only. No inline script or style, no
 * eval, nothing framed or framing, no form posting anywhere, and DOM sinks that take HTML
 * refuse strings (Trusted Types): the pages build their DOM through the renderer alone.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const CONSOLE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};
/** Kinds worth compressing; images and fonts are compressed already. */
const TEXTUAL = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt', '.map']);

interface Asset {
  body: Buffer;
  /**
   * Compressed on first request (null: not worth it), off the event loop: most files are never
   * asked for, and a source map takes a while.
   */
  gzip: Promise<Buffer | null> | null | undefined;
  type: string;
  etag: string;
  /** Files under assets/ carry a content hash in their names: they never change. */
  immutable: boolean;
}

/**
 * Every file of the built console, read once: the set of servable paths is fixed at start, so
 * no request path ever reaches the file system (nothing to traverse).
 */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (at: string): void => {
    for (const name of readdirSync(at)) {
      const full = path.join(at, name);
      if (statSync(full).isDirectory()) {
        walk(full);
        continue;
      }
      const ext = path.extname(name).toLowerCase();
      const type = TYPES[ext];
      if (!type) continue;
      const body = readFileSync(full);
      const relative = path.relative(dir, full).split(path.sep).join('/');
      assets.set(relative, {
        body,
        gzip: TEXTUAL.has(ext) && body.length > 1024 ? undefined : null,
        type,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        immutable: relative.startsWith('assets/'),
      });
    }
  };
  walk(dir);
  return assets;
}

const compress = promisify(gzip);

function gzipOf(asset: Asset): Promise<Buffer | null> | null {
  if (asset.gzip === undefined) {
    asset.gzip = compress(asset.body, { level: 9 }).then(
      (packed) => (packed.length < asset.body.length ? packed : null),
      () => null,
    );
  }
  return asset.gzip;
}

/** Built files by folder and build: every app of a process shares one reading. */
const loaded = new Map<string, { built: number; assets: Map<string, Asset> }>();

function assetsOf(dir: string): Map<string, Asset> | undefined {
  const index = path.join(dir, 'index.html');
  if (!existsSync(index)) return undefined;
  const built = statSync(index).mtimeMs;
  let entry = loaded.get(dir);
  if (!entry || entry.built !== built) {
    entry = { built, assets: loadAssets(dir) };
    loaded.set(dir, entry);
  }
  return entry.assets;
}

/**
 * Serves the analyst console from its built files at `/console`: assets by name, and the page
 * itself for every other path below it (the console routes in the browser). When the console
 * was not built, its paths answer 503 saying how to build it; the API is unaffected.
 */
export function consoleAssets(dir: string): Middleware {
  const assets = assetsOf(dir);
  return async (ctx, next) => {
    if (ctx.path !== CONSOLE_BASE && !ctx.path.startsWith(`${CONSOLE_BASE}/`)) {
      await next();
      return;
    }
    const state = stateOf(ctx);
    const rest = ctx.path.slice(CONSOLE_BASE.length + 1);
    const isAsset = rest.startsWith('assets/') || /\.[a-z0-9]+$/i.test(rest);
    state.routeTemplate = isAsset ? `${CONSOLE_BASE}/assets` : CONSOLE_BASE;
    ctx.set(CONSOLE_HEADERS);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new HttpError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}; use GET`, {
        Allow: 'GET, HEAD',
      });
    }
    if (!assets) {
      throw new HttpError(
        'UNAVAILABLE',
        'the console has not been built: run `npm run build:console` (npm start and npm test do it)',
        {},
      );
    }
    const asset = isAsset ? assets.get(rest) : assets.get('index.html');
    if (!asset) throw new HttpError('NOT_FOUND', `no console file at ${ctx.path}`, {});
    ctx.set('Cache-Control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.set('ETag', asset.etag);
    ctx.set('Vary', 'Accept-Encoding');
    ctx.type = asset.type;
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    const packed = ctx.acceptsEncodings('gzip', 'identity') === 'gzip' ? await gzipOf(asset) : null;
    if (packed) ctx.set('Content-Encoding', 'gzip');
    ctx.status = 200;
    ctx.body = packed ?? asset.body;
  };
}
