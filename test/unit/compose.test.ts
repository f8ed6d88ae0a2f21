import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../src/paths.js';

/**
 * docker-compose.yml read as text: its port mappings (the items of every `ports:` list) and the
 * lines that pass NEO4J_PASSWORD on.
 */
function compose(): { ports: string[]; passwordLines: string[] } {
  const lines = readFileSync(path.join(projectRoot(), 'docker-compose.yml'), 'utf8').split('\n');
  const ports: string[] = [];
  let inPorts: number | undefined;
  for (const line of lines) {
    const indent = line.length - line.trimStart().length;
    if (/^\s*ports:\s*$/.test(line)) {
      inPorts = indent;
      continue;
    }
    const item = /^\s*-\s*['"]?([^'"\s]+)['"]?\s*$/.exec(line);
    if (inPorts !== undefined && item && indent > inPorts) ports.push(item[1]!);
    else if (line.trim() !== '') inPorts = undefined;
  }
  const passwordLines = lines.filter((l) => !l.trim().startsWith('#') && l.includes('NEO4J_PASSWORD'));
  return { ports, passwordLines };
}

describe('docker-compose.yml', () => {
  it('publishes every port on the loopback interface only', () => {
    const { ports } = compose();
    expect(ports).to.include.members(['127.0.0.1:7474:7474', '127.0.0.1:7687:7687', '127.0.0.1:8080:8080']);
    for (const port of ports) expect(port, port).to.match(/^127\.0\.0\.1:\d+:\d+$/);
  });

  it('takes the Neo4j password from the environment, with no default written in the file', () => {
    const { passwordLines } = compose();
    expect(passwordLines).to.have.length.above(1);
    for (const line of passwordLines) {
      const uses = [...line.matchAll(/\$\{NEO4J_PASSWORD([^}]*)\}/g)].map((m) => m[1]);
      expect(uses, line).to.deep.equal([':?set NEO4J_PASSWORD']);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(path.join(projectRoot(), 'Dockerfile'), 'utf8');
  const images = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!);

  it('builds and runs on one supported Node LTS line (22 or 24), the slim Debian image', () => {
    expect(images).to.have.length(2);
    for (const image of images) expect(image, image).to.match(/^node:(22|24)-bookworm-slim$/);
    expect(new Set(images).size, 'both stages on the same Node').to.equal(1);
  });

  it('leaves the code running on Node 20.19 and later on the 20 line, and on 22.13 and later', () => {
    const pkg = JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(pkg.engines.node).to.equal('^20.19.0 || >=22.13.0');
  });
});
