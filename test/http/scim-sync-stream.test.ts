import http from 'node:http';
import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import { cypher } from '../helpers/db.js';
import { eventually } from '../helpers/wait.js';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

let sequence = 0;
const uniq = (base: string): string => `${base}${Date.now().toString(36)}${(sequence += 1)}`;

interface Sent {
  status: number;
  body: any;
  headers: http.IncomingHttpHeaders;
}

/**
 * POSTs `pieces` as a body of unknown length (chunked), one write per piece as the socket takes
 * them, the way a client streams a snapshot it is still producing.
 */
function postStreamed(url: string, token: string, pieces: Iterable<string>): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/x-ndjson' },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined });
      });
    });
    // A server that answers before the body ends may close the connection under the writes.
    req.on('error', (err) => (req.writableEnded ? undefined : reject(err)));
    const iterator = pieces[Symbol.iterator]();
    const pump = (): void => {
      for (let next = iterator.next(); !next.done; next = iterator.next()) {
        if (req.destroyed) return;
        if (!req.write(next.value)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

/** `count` JSON lines of users, each padded to about `lineBytes`, in pieces of `pieceBytes`. */
function* snapshot(prefix: string, count: number, lineBytes: number, pieceBytes: number): Generator<string> {
  let piece = '';
  for (let i = 0; i < count; i++) {
    const user = {
      schemas: [USER],
      userName: `${prefix}-${i}@example.com`,
      externalId: `${prefix}-${i}`,
      displayName: `User ${i} ✓`,
      nickName: '',
    };
    user.nickName = 'n'.repeat(Math.max(0, lineBytes - JSON.stringify(user).length));
    piece += `${JSON.stringify(user)}\n`;
    while (piece.length >= pieceBytes) {
      yield piece.slice(0, pieceBytes);
      piece = piece.slice(pieceBytes);
    }
  }
  if (piece) yield piece;
}

describe('POST /v1/connectors/{id}/sync streams its snapshot', () => {
  const fx = useApp({ env: { SYNC_MAX_BYTES: String(6 * 1024 * 1024) } });

  async function connector(): Promise<{ id: string }> {
    const res = await fx.api.post('/v1/connectors', { name: uniq('stream-') });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id };
  }

  const stored = async (): Promise<{ chunks: number; syncs: number }> => {
    const [row] = await cypher(
      fx.app.runtime.db,
      'RETURN COUNT { (:SyncChunk) } AS chunks, COUNT { (:ConnectorSync) } AS syncs',
    );
    return row as { chunks: number; syncs: number };
  };

  it('reconciles a snapshot larger than one stored piece, sent in small writes with lines cut anywhere', async function () {
    this.timeout(120_000);
    const { id } = await connector();
    const prefix = uniq('u');
    // About 5 MiB: more than one 4 MiB piece, with a line crossing the cut between them.
    const sent = await postStreamed(
      `${fx.app.http.baseUrl}/v1/connectors/${id}/sync`,
      fx.token,
      snapshot(prefix, 5_000, 1_050, 65_521),
    );
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    expect(sent.body.bytes).to.be.greaterThan(5_000_000);
    const { value } = await eventually(
      async () => (await fx.api.get(`/v1/connectors/${id}/sync/${sent.body.id}`)).body,
      (s) => s.status === 'completed' || s.status === 'failed',
      100_000,
      200,
    );
    expect(value.status, JSON.stringify(value)).to.equal('completed');
    expect(value.counts).to.include({ lines: 5_000, invalid: 0, users_created: 5_000 });
    const [row] = await cypher(
      fx.app.runtime.db,
      'MATCH (p:Principal) WHERE p.user_name STARTS WITH $prefix RETURN count(p) AS n, count(DISTINCT p.name) AS names',
      { prefix: `${prefix}-`.toLowerCase() },
    );
    expect(row).to.deep.equal({ n: 5_000, names: 5_000 });
    // The pieces go once the sync is done.
    const [left] = await cypher(fx.app.runtime.db, 'RETURN COUNT { (:SyncChunk {sync_id: $id}) } AS n', {
      id: sent.body.id,
    });
    expect(left).to.deep.equal({ n: 0 });
  });

  it('answers 413 once a streamed snapshot passes the limit, and keeps nothing of it', async function () {
    this.timeout(60_000);
    const { id } = await connector();
    const before = await stored();
    const sent = await postStreamed(
      `${fx.app.http.baseUrl}/v1/connectors/${id}/sync`,
      fx.token,
      snapshot(uniq('big'), 8_000, 1_000, 32_768),
    );
    expect(sent.status).to.equal(413);
    expect(sent.body).to.include({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(sent.headers['connection']).to.equal('close');
    expect(await stored()).to.deep.equal(before);
  });

  it('answers 413 at once to a declared length over the limit', async () => {
    const { id } = await connector();
    const res = await fx.api.post(`/v1/connectors/${id}/sync`, undefined, {
      raw: 'x'.repeat(6 * 1024 * 1024 + 1),
      headers: { 'Content-Type': 'application/x-ndjson' },
    });
    expect(res.status).to.equal(413);
  });
});
