import { expect } from 'chai';
import { neo4jBrowser, type Neo4jEndpoint } from '../../src/dev/local-neo4j.js';

/** What `npm start` logs about Neo4j Browser, whichever way it came by its Neo4j. */

const stop = async (): Promise<void> => undefined;

describe('Neo4j Browser at start-up', () => {
  it('names the embedded Neo4j’s Browser and its sign-in without authentication', () => {
    const said = neo4jBrowser({
      uri: 'bolt://127.0.0.1:7687',
      user: 'neo4j',
      password: '',
      source: 'maven',
      browserUrl: 'http://127.0.0.1:7474/browser/',
      stop,
    });
    expect(said.url).to.equal('http://127.0.0.1:7474/browser/');
    expect(said.message).to.equal(
      'Neo4j Browser at http://127.0.0.1:7474/browser/: connect URL bolt://127.0.0.1:7687, authentication ' +
        '"No authentication" (the embedded Neo4j listens on 127.0.0.1 only)',
    );
  });

  it('gives the user and password of a container the service started, saying where they are good', () => {
    const said = neo4jBrowser({
      uri: 'bolt://localhost:32769',
      user: 'neo4j',
      password: 'pas-local-password',
      source: 'docker',
      browserUrl: 'http://localhost:32768/browser/',
      stop,
    });
    expect(said.url).to.equal('http://localhost:32768/browser/');
    expect(said.message).to.contain('Neo4j Browser at http://localhost:32768/browser/');
    expect(said.message).to.contain('user neo4j, password pas-local-password');
    expect(said.message).to.contain('it opens that container only');
  });

  it('calls a configured Neo4j the operator’s own and never repeats its password', () => {
    const endpoint: Neo4jEndpoint = {
      uri: 'neo4j+s://reader:uri-secret@graph.example:7687',
      user: 'pas',
      password: 'configured-secret',
      source: 'configured',
      stop,
    };
    const said = neo4jBrowser(endpoint);
    expect(said.url).to.equal(undefined);
    expect(said.message).to.contain('Neo4j at neo4j+s://graph.example:7687 is your own (NEO4J_URI)');
    expect(said.message).to.contain('wherever that server serves it');
    expect(said.message).to.contain('sign in as pas with the NEO4J_PASSWORD you configured');
    expect(said.message).not.to.contain('configured-secret');
    expect(said.message).not.to.contain('uri-secret');
    const open = neo4jBrowser({ ...endpoint, password: '' });
    expect(open.message).to.contain('"No authentication" (NEO4J_PASSWORD is empty)');
  });
});
