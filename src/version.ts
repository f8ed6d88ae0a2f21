import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths.js';

/** The service's version: package.json's, read once. */
export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }
).version;
