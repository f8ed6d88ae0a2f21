import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The analyst console: a static build served by the service at /console (src/http/console.ts).
 * Everything it loads is a file of its own, so the page runs under a CSP without 'unsafe-inline'.
 */
export default defineConfig({
  root,
  base: '/console/',
  publicDir: 'public',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // Inlined assets would become data: URLs in scripts; the policy allows them for images only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1024,
  },
});
