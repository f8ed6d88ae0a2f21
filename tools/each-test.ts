/**
 * Runs every test of the suite on its own (`mocha --fgrep <its full title>`), so that a test
 * leaning on data or state left by another one is found. One Neo4j (with its Browser) serves all
 * the runs; each run still starts the service afresh, as a developer's `--grep` would.
 *
 *   node --import tsx tools/each-test.ts            # every test
 *   node --import tsx tools/each-test.ts audit      # those whose full title contains "audit"
 *
 * Prints one line per test and a summary; exits 1 if any test failed alone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { provideNeo4j } from '../src/dev/local-neo4j.js';

interface Listed {
  fullTitle: string;
}

function listTests(): string[] {
  // Without the configuration file: listing needs no database, so no global setup.
  const res = spawnSync(
    'npx',
    [
      'mocha',
      '--no-config',
      '--node-option',
      'import=tsx',
      '--extension',
      'ts',
      '--dry-run',
      '--reporter',
      'json',
      'test/unit/**/*.test.ts',
      'test/http/**/*.test.ts',
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const json = res.stdout.slice(res.stdout.indexOf('{'));
  return (JSON.parse(json) as { tests: Listed[] }).tests.map((t) => t.fullTitle);
}

function runAlone(
  title: string,
  env: NodeJS.ProcessEnv,
): Promise<{ ok: boolean; output: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npx', ['mocha', '--fgrep', title], { env });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => {
      // A title that selects nothing passes vacuously: count it as a failure.
      const ran = /([1-9][0-9]*) passing/.test(output);
      resolve({ ok: code === 0 && ran, output, ms: Date.now() - started });
    });
  });
}

async function main(): Promise<void> {
  const filter = process.argv[2];
  const titles = listTests().filter((t) => !filter || t.includes(filter));
  const neo4j = await provideNeo4j(
    { uri: undefined, user: 'neo4j', password: '' },
    {
      provider: 'auto',
      dataDir: undefined,
      port: 0,
      httpPort: 0,
      heap: '1g',
      pageCache: '256m',
      progress: (m) => process.stdout.write(`[neo4j] ${m}\n`),
    },
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NEO4J_URI: neo4j.uri,
    NEO4J_USER: neo4j.user,
    NEO4J_PASSWORD: neo4j.password,
    ...(neo4j.browserUrl ? { NEO4J_BROWSER_URL: neo4j.browserUrl } : {}),
  };
  const failed: { title: string; output: string }[] = [];
  try {
    for (const [i, title] of titles.entries()) {
      const result = await runAlone(title, env);
      process.stdout.write(
        `${result.ok ? 'ok  ' : 'FAIL'} ${String(i + 1).padStart(4)}/${titles.length} ${(result.ms / 1000).toFixed(1).padStart(5)} s  ${title}\n`,
      );
      if (!result.ok) failed.push({ title, output: result.output });
    }
  } finally {
    await neo4j.stop();
  }
  process.stdout.write(`\n${titles.length - failed.length} of ${titles.length} tests pass alone\n`);
  for (const f of failed) process.stdout.write(`\n--- ${f.title}\n${f.output.slice(-3000)}\n`);
  process.exit(failed.length > 0 ? 1 : 0);
}

void main();
