import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../src/paths.js';

const read = (file: string): string => readFileSync(path.join(projectRoot(), file), 'utf8');

describe('node flags of the service', () => {
  it('are the same for npm start and the container image', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    const fromStart = /\bnode ((?:--\S+ )*)dist\/src\/main\.js/.exec(start)?.[1]?.trim().split(' ');
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(fromStart, 'npm start runs node dist/src/main.js').to.not.equal(undefined);
    expect(cmd, 'the Dockerfile has a CMD').to.not.equal(undefined);
    const argv = JSON.parse(cmd!) as string[];
    expect(argv[0]).to.equal('node');
    expect(argv.at(-1)).to.equal('dist/src/main.js');
    expect(argv.slice(1, -1)).to.deep.equal(fromStart);
    // A young generation large enough that a busy decision endpoint's short-lived objects die in
    // it, instead of filling the old generation and its longer collections.
    expect(fromStart).to.include('--max-semi-space-size=64');
    // An old generation that starts large: a serving process promotes a little all the time, and
    // with the limit V8 sets from its small live size it ran a full collection every few seconds.
    expect(fromStart).to.include('--initial-old-space-size=256');
  });
});
