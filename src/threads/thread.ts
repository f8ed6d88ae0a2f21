import { Worker } from 'node:worker_threads';

/**
 * A worker thread running the module `name` beside `here` (the calling module's URL). Compiled,
 * the module is JavaScript. Run from the TypeScript sources (tests, the development server), it is
 * TypeScript, which a worker does not load by itself: a bootstrap registers the same loader in it
 * first.
 */
export function workerThread(here: string, name: string, workerData: unknown): Worker {
  if (!here.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here), { workerData });
  const file = new URL(`./${name}.ts`, here).href;
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(file)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** The thread a task was on stopped before answering it. */
export class ThreadLost extends Error {}
