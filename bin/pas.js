#!/usr/bin/env node
// The `pas` command line (cli/main.ts, documented in docs/cli.md), run from its TypeScript
// sources: tsx compiles them as they are imported, for this import alone, so nothing has to be
// built first and `npx pas` works in a clone right after `npm ci`.
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const cli = await tsImport('../cli/main.ts', {
  parentURL: import.meta.url,
  // The project's own compiler settings, wherever the command is run from.
  tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)),
});
process.exitCode = await cli.main(process.argv);
