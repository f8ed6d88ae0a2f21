import { readFile } from 'node:fs/promises';
import path from 'node:path';
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
    expect(config.proxyHops).to.equal(1);
    expect(config.neo4j.uri).to.equal(undefined);
    expect(config.shutdownTimeoutMs).to.equal(2500);
  });

  const bad: [string, string][] = [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['NEO4J_URI', 'http://localhost:7474'],
    ['TRUST_PROXY', 'maybe'],
    ['TRUST_PROXY', '-1'],
    ['TRUST_PROXY', '100'],
    ['TRUST_PROXY', '1.5'],
    ['NEO4J_LOCAL_PORT', '65536'],
    ['NEO4J_LOCAL_HTTP_PORT', '-1'],
    ['NEO4J_TX_TIMEOUT_MS', '0'],
    ['NEO4J_BACKGROUND_TX_TIMEOUT_MS', 'long'],
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

  it('reads TRUST_PROXY as the number of proxy hops trusted, true and false as 1 and 0', () => {
    const hops = (value: string | undefined): number =>
      loadConfig(value === undefined ? {} : { TRUST_PROXY: value }).proxyHops;
    expect(hops(undefined)).to.equal(0);
    expect(hops('false')).to.equal(0);
    expect(hops('0')).to.equal(0);
    expect(hops('true')).to.equal(1);
    expect(hops('1')).to.equal(1);
    expect(hops('3')).to.equal(3);
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).to.throw(ConfigError, /TRUST_PROXY="yes".*proxy hops/);
  });

  it('gives several serving processes a background process unless BACKGROUND_PROCESS is off', () => {
    const background = (env: Record<string, string>): boolean => loadConfig(env).backgroundProcess;
    expect(background({ WORKERS: '2' })).to.equal(true);
    expect(background({ WORKERS: '1' })).to.equal(false);
    expect(background({ WORKERS: '1', BACKGROUND_PROCESS: 'on' })).to.equal(true);
    expect(background({ WORKERS: '4', BACKGROUND_PROCESS: 'off' })).to.equal(false);
    expect(() => loadConfig({ BACKGROUND_PROCESS: 'yes' })).to.throw(ConfigError, /BACKGROUND_PROCESS/);
  });

  it('paces background work by default, and refuses a threshold out of range', () => {
    expect(loadConfig({}).pacing).to.deep.equal({ enabled: true, delayMs: 10 });
    expect(loadConfig({ BACKGROUND_PACING: 'off', BACKGROUND_PACING_DELAY_MS: '25' }).pacing).to.deep.equal({
      enabled: false,
      delayMs: 25,
    });
    expect(() => loadConfig({ BACKGROUND_PACING: 'maybe' })).to.throw(ConfigError, /BACKGROUND_PACING/);
    expect(() => loadConfig({ BACKGROUND_PACING_DELAY_MS: '0' })).to.throw(
      ConfigError,
      /BACKGROUND_PACING_DELAY_MS/,
    );
  });

  it('lets the local Neo4j take any free port with 0', () => {
    const config = loadConfig({ NEO4J_LOCAL_PORT: '0', NEO4J_LOCAL_HTTP_PORT: '0' });
    expect(config.localNeo4j.port).to.equal(0);
    expect(config.localNeo4j.httpPort).to.equal(0);
    const defaults = loadConfig({});
    expect(defaults.localNeo4j.port).to.equal(7687);
    expect(defaults.localNeo4j.httpPort).to.equal(7474);
  });

  it('gives transactions a timeout, longer for background work', () => {
    const defaults = loadConfig({});
    expect(defaults.neo4j.txTimeoutMs).to.equal(30_000);
    expect(defaults.neo4j.backgroundTxTimeoutMs).to.equal(600_000);
    const set = loadConfig({ NEO4J_TX_TIMEOUT_MS: '250', NEO4J_BACKGROUND_TX_TIMEOUT_MS: '5000' });
    expect(set.neo4j.txTimeoutMs).to.equal(250);
    expect(set.neo4j.backgroundTxTimeoutMs).to.equal(5000);
  });

  it('serves /metrics on the API port, open, unless METRICS_PORT or METRICS_TOKEN say otherwise', () => {
    expect(loadConfig({}).metrics).to.deep.equal({ port: undefined, token: undefined });
    const set = loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 'scrape-token-0123456789' });
    expect(set.metrics).to.deep.equal({ port: 9464, token: 'scrape-token-0123456789' });
    expect(loadConfig({ METRICS_PORT: '0' }).metrics.port).to.equal(0);
    // The token: 16 to 256 printable characters without spaces, which a header carries as they are.
    for (const token of ['short', 'has a space in it here', 'x'.repeat(257), 'tab\there-0123456789']) {
      expect(() => loadConfig({ METRICS_TOKEN: token }), token).to.throw(
        ConfigError,
        /METRICS_TOKEN=.*16 to 256 printable characters/,
      );
    }
    expect(() => loadConfig({ METRICS_PORT: '70000' })).to.throw(ConfigError, /METRICS_PORT="70000"/);
    // Not the API's own port, whose /metrics it takes over.
    expect(() => loadConfig({ PORT: '9000', METRICS_PORT: '9000' })).to.throw(
      ConfigError,
      /METRICS_PORT="9000" is not valid: expected a port other than PORT/,
    );
    expect(() => loadConfig({ METRICS_PORT: '8080' })).to.throw(ConfigError, /other than PORT/);
  });

  it('writes a generated bootstrap secret under the data directory unless BOOTSTRAP_SECRET_FILE says where', () => {
    expect(loadConfig({}).clients.bootstrapSecretFile).to.equal(path.join('data', 'bootstrap-admin.json'));
    expect(loadConfig({ NEO4J_DATA_DIR: '/var/lib/pas' }).clients.bootstrapSecretFile).to.equal(
      '/var/lib/pas/bootstrap-admin.json',
    );
    expect(
      loadConfig({ BOOTSTRAP_SECRET_FILE: '/run/secrets/admin.json' }).clients.bootstrapSecretFile,
    ).to.equal('/run/secrets/admin.json');
  });

  it('knows a production start and whether PUBLIC_BASE_URL was set', () => {
    expect(loadConfig({}).production).to.equal(false);
    expect(loadConfig({ NODE_ENV: 'development' }).production).to.equal(false);
    expect(loadConfig({ NODE_ENV: 'production' }).production).to.equal(true);
    expect(loadConfig({}).publicBaseUrlConfigured).to.equal(false);
    expect(loadConfig({ PUBLIC_BASE_URL: '' }).publicBaseUrlConfigured).to.equal(false);
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://pas.example' }).publicBaseUrlConfigured).to.equal(true);
  });

  it('reports every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'x', LOG_LEVEL: 'y' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.has.length(2);
  });

  it('documents every variable, and only those, in docs/configuration.md', async () => {
    const doc = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([A-Z0-9_]+)`/gm)].map((m) => m[1]);
    const names = Object.keys(ConfigSchema.properties);
    expect(
      names.filter((name) => !rows.includes(name)),
      'variables missing from the configuration table',
    ).to.deep.equal([]);
    expect(
      rows.filter((name) => !names.includes(name!)),
      'rows of the table naming no variable the service reads',
    ).to.deep.equal([]);
  });
});
