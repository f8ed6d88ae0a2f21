import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { ConfigError, ConfigSchema, loadConfig } from '../../src/config/config.js';

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config.port).to.equal(8080);
    expect(config.host).to.equal('0.0.0.0');
    expect(config.neo4j.uri).to.equal(undefined);
    expect(config.localNeo4j.dataDir).to.equal('./data');
    expect(config.publicBaseUrl).to.equal('http://localhost:8080');
  });

  it('coerces typed values and treats empty strings as unset', () => {
    const config = loadConfig({
      PORT: '9000',
      TRUST_PROXY: 'true',
      NEO4J_URI: '',
      SHUTDOWN_TIMEOUT_MS: '2500',
    });
    expect(config.port).to.equal(9000);
    expect(config.trustProxy).to.equal(true);
    expect(config.neo4j.uri).to.equal(undefined);
    expect(config.shutdownTimeoutMs).to.equal(2500);
  });

  const bad: [string, string][] = [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['NEO4J_URI', 'http://localhost:7474'],
    ['TRUST_PROXY', 'maybe'],
    ['NEO4J_LOCAL_HEAP', '1 gig'],
    ['NEO4J_PROVIDER', 'podman'],
  ];
  for (const [name, value] of bad) {
    it(`rejects ${name}=${value} with a message naming the variable`, () => {
      let error: unknown;
      try {
        loadConfig({ [name]: value });
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(ConfigError);
      expect((error as ConfigError).message).to.contain(`${name}=${JSON.stringify(value)}`);
    });
  }

  it('reports every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'x', LOG_LEVEL: 'y' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.has.length(2);
  });

  it('documents every variable in the README', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const missing = Object.keys(ConfigSchema.properties).filter((name) => !readme.includes(`\`${name}\``));
    expect(missing, 'variables missing from the README configuration table').to.deep.equal([]);
  });
});
