import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Changes } from '../../src/audit/audit.js';
import { sha256 } from '../../src/auth/secrets.js';
import { AppError } from '../../src/errors/errors.js';
import { newId } from '../../src/ids.js';
import type { Page } from '../../src/pagination.js';
import type { DeliveryView, UpdateWebhookInput } from '../../src/schemas/webhooks.js';
import { signingSecrets, type AttemptRecord, type SealedSecrets } from '../../src/webhooks/messages.js';
import type {
  DeliveryFilter,
  NewWebhook,
  StoredWebhook,
  WebhookFields,
  WebhookSecrets,
} from '../../src/webhooks/repository.js';
import { WebhookService, type WebhookRepository } from '../../src/webhooks/service.js';
import type { SendResult } from '../../src/webhooks/transport.js';
import { FakeDatabase, FakeEventSink, FIRST_PAGE, operation, rejection } from '../helpers/fakes.js';

const EARLIER = '2020-01-01T00:00:00.000Z';
const DAY_MS = 24 * 3_600_000;

type Row = StoredWebhook & SealedSecrets;

/** The webhook repository over Maps: webhooks with their sealed secrets, and the delivery log. */
class FakeWebhooks implements WebhookRepository {
  readonly webhooks = new Map<string, Row>();
  readonly tests: AttemptRecord[] = [];
  readonly calls: string[] = [];

  async create(_tx: unknown, w: NewWebhook): Promise<StoredWebhook> {
    this.calls.push('create');
    this.webhooks.set(w.id, {
      id: w.id,
      url: w.url,
      events: [...w.events],
      description: w.description,
      status: 'active',
      created_at: EARLIER,
      created_by: w.createdBy,
      failure_count: 0,
      secret_sealed: w.secretSealed,
    });
    return this.stored(w.id)!;
  }

  async get(_tx: unknown, id: string): Promise<StoredWebhook | undefined> {
    return this.stored(id);
  }

  async count(_tx: unknown, status: StoredWebhook['status'] | null): Promise<number> {
    this.calls.push(`count:${status}`);
    return [...this.webhooks.values()].filter((w) => status === null || w.status === status).length;
  }

  async page(_tx: unknown, status: StoredWebhook['status'] | null, page: Page): Promise<StoredWebhook[]> {
    this.calls.push(`page:${status}`);
    return [...this.webhooks.keys()]
      .map((id) => this.stored(id)!)
      .filter((w) => status === null || w.status === status)
      .slice(page.skip, page.skip + page.limit);
  }

  async lock(_tx: unknown, id: string): Promise<StoredWebhook | undefined> {
    this.calls.push('lock');
    return this.stored(id);
  }

  /** As update.cypher: a change of status (re)sets what goes with it. */
  async update(
    _tx: unknown,
    id: string,
    fields: WebhookFields,
    reason: string | null,
  ): Promise<StoredWebhook> {
    this.calls.push(`update:${reason}`);
    const row = this.webhooks.get(id)!;
    const next: Row = { ...row, ...fields, events: [...fields.events], updated_at: 'now' };
    if (fields.status !== row.status) {
      next.disabled_at = fields.status === 'disabled' ? 'now' : undefined;
      next.disabled_reason = fields.status === 'disabled' ? (reason ?? undefined) : undefined;
      if (fields.status === 'active') {
        next.failure_count = 0;
        next.failing_since = undefined;
      }
    }
    this.webhooks.set(id, next);
    return this.stored(id)!;
  }

  async delete(_tx: unknown, id: string): Promise<void> {
    this.calls.push('delete');
    this.webhooks.delete(id);
  }

  async rotateSecret(_tx: unknown, id: string, secretSealed: string, overlapUntil: string): Promise<void> {
    this.calls.push('rotateSecret');
    const row = this.webhooks.get(id)!;
    this.webhooks.set(id, {
      ...row,
      previous_secret_sealed: row.secret_sealed,
      previous_secret_until: overlapUntil,
      secret_sealed: secretSealed,
      secret_rotated_at: 'now',
    });
  }

  async secrets(_tx: unknown, id: string): Promise<WebhookSecrets | undefined> {
    const row = this.webhooks.get(id);
    if (!row) return undefined;
    const { url, secret_sealed, previous_secret_sealed, previous_secret_until } = row;
    return { id, url, secret_sealed, previous_secret_sealed, previous_secret_until };
  }

  async recordTest(_tx: unknown, delivery: AttemptRecord): Promise<void> {
    this.tests.push(delivery);
  }

  async countDeliveries(_tx: unknown, id: string, filter: DeliveryFilter): Promise<number> {
    this.calls.push(`countDeliveries:${id}:${filter.eventId}:${filter.success}`);
    return 0;
  }

  async deliveries(_tx: unknown, id: string, filter: DeliveryFilter, page: Page): Promise<DeliveryView[]> {
    this.calls.push(`deliveries:${id}:${filter.eventId}:${filter.success}:${page.skip}`);
    return [];
  }

  /** The row as the queries return it: without its secrets. */
  private stored(id: string): StoredWebhook | undefined {
    const row = this.webhooks.get(id);
    if (!row) return undefined;
    const { secret_sealed: _s, previous_secret_sealed: _p, previous_secret_until: _u, ...rest } = row;
    return { ...rest, events: [...rest.events] };
  }
}

/** A transport that delivers nothing and answers what it is told to. */
class FakeTransport {
  readonly sent: { url: string; headers: Record<string, string>; body: string }[] = [];
  answer: SendResult = { statusCode: 204, success: true, error: null, durationMs: 12.4, responseBody: '' };

  async send(input: { url: string; headers: Record<string, string>; body: string }): Promise<SendResult> {
    this.sent.push(input);
    return this.answer;
  }
}

const kek = randomBytes(32);

function setup(allowInsecure = false) {
  const db = new FakeDatabase();
  const sink = new FakeEventSink();
  const repo = new FakeWebhooks();
  const transport = new FakeTransport();
  const service = new WebhookService(db, sink, transport, { kek, addresses: { allowInsecure } }, repo);
  return { db, sink, repo, transport, service };
}

const op = operation('cli_admin');
const URL_WITH_SECRETS = 'https://hooks.example.test/T0001/s3cr3t-in-path?token=s3cr3t-in-query';
const audited = (url: string): string => `${new URL(url).origin}/… (sha256:${sha256(url).slice(0, 12)})`;

function expectCode(err: Error, code: string): AppError {
  expect(err).to.be.instanceOf(AppError);
  expect((err as AppError).code).to.equal(code);
  return err as AppError;
}

/** A webhook created through the service, with its secret. */
async function created(service: WebhookService, url = URL_WITH_SECRETS) {
  return service.create({ url, events: ['principal.*'], description: 'first' }, op);
}

describe('webhook service', () => {
  describe('create', () => {
    it('answers the secret once, keeps it sealed, and records webhook.created without the URL in clear', async () => {
      const { service, sink, repo } = setup();
      const webhook = await service.create(
        { url: URL_WITH_SECRETS, events: ['principal.*', 'group.created'] },
        op,
      );
      expect(webhook.secret).to.match(/^whsec_/);
      expect(webhook).to.include({
        url: URL_WITH_SECRETS,
        status: 'active',
        description: null,
        created_by: 'cli_admin',
        last_delivery_at: null,
        failure_count: 0,
      });
      const row = repo.webhooks.get(webhook.id)!;
      expect(row.secret_sealed).to.not.include(webhook.secret);
      expect(signingSecrets(kek, row)).to.deep.equal([webhook.secret]);
      expect(sink.events).to.deep.equal([
        {
          type: 'webhook.created',
          target: { type: 'webhook', id: webhook.id },
          changes: {
            url: { to: audited(URL_WITH_SECRETS) },
            events: { to: ['principal.*', 'group.created'] },
          },
          op,
        },
      ]);
      expect(JSON.stringify(sink.events)).to.not.include('s3cr3t').and.not.include(webhook.secret);
    });

    it('records the description when one is given', async () => {
      const { service, sink } = setup();
      await created(service);
      expect(sink.events[0]!.changes).to.have.deep.property('description', { to: 'first' });
    });

    it('stores the URL in its normal form', async () => {
      const { service, repo } = setup();
      const webhook = await service.create({ url: 'HTTPS://Hooks.Example.TEST:443', events: ['*'] }, op);
      expect(webhook.url).to.equal('https://hooks.example.test/');
      expect(repo.webhooks.get(webhook.id)!.url).to.equal('https://hooks.example.test/');
    });

    const urls: [string, boolean, string | null][] = [
      ['http://hooks.example.test/in', false, 'url must use https'],
      ['http://hooks.example.test/in', true, null],
      ['https://127.0.0.1/in', false, 'url points to a loopback address (127.0.0.1)'],
      ['http://127.0.0.1:8080/in', true, null],
      ['https://10.1.2.3/in', true, 'url points to a private address (10.1.2.3)'],
      ['https://user:pw@hooks.example.test/', false, 'url must not contain credentials'],
      ['not a url', false, 'url is not a valid URL'],
    ];
    for (const [url, allowInsecure, problem] of urls) {
      const policy = allowInsecure ? 'insecure URLs allowed' : 'strict';
      it(`${problem ? 'refuses' : 'accepts'} ${url} (${policy})`, async () => {
        const { service, sink, repo, db } = setup(allowInsecure);
        const work = service.create({ url, events: ['*'] }, op);
        if (problem === null) {
          await work;
          expect(repo.webhooks.size).to.equal(1);
          return;
        }
        const err = expectCode(await rejection(work), 'VALIDATION_FAILED');
        expect(err.message).to.equal(problem);
        expect(err.errors).to.deep.equal([{ pointer: '/url', message: problem }]);
        expect(db.units).to.deep.equal([]);
        expect(sink.events).to.deep.equal([]);
      });
    }

    it('refuses event patterns that match no event type, pointing at each', async () => {
      const { service, db } = setup();
      const err = expectCode(
        await rejection(
          service.create(
            { url: 'https://hooks.example.test/', events: ['principal.created', 'nothing.*', 'bogus'] },
            op,
          ),
        ),
        'VALIDATION_FAILED',
      );
      expect(err.errors!.map((e) => e.pointer)).to.deep.equal(['/events/1', '/events/2']);
      expect(db.units).to.deep.equal([]);
    });

    it('answers what the first run committed, with its secret, when a commit answer was lost', async () => {
      const { service, sink, repo, db } = setup();
      db.lostCommitAnswers = 1;
      const webhook = await created(service);
      expect([...repo.webhooks.keys()]).to.deep.equal([webhook.id]);
      expect(repo.calls.filter((c) => c === 'create')).to.have.length(1);
      expect(signingSecrets(kek, repo.webhooks.get(webhook.id)!)).to.deep.equal([webhook.secret]);
      expect(sink.types()).to.deep.equal(['webhook.created']);
    });
  });

  describe('update', () => {
    const OTHER_URL = 'https://other.example.test/in?key=s3cr3t';
    const cases: [string, UpdateWebhookInput, Changes, string | null][] = [
      [
        'a new URL, shown by origin and fingerprint',
        { url: OTHER_URL },
        { url: { from: audited(URL_WITH_SECRETS), to: audited(OTHER_URL) } },
        null,
      ],
      ['new events', { events: ['*'] }, { events: { from: ['principal.*'], to: ['*'] } }, null],
      [
        'a new description',
        { description: 'second' },
        { description: { from: 'first', to: 'second' } },
        null,
      ],
      ['a cleared description', { description: null }, { description: { from: 'first', to: null } }, null],
      [
        'a disabled status',
        { status: 'disabled' },
        { status: { from: 'active', to: 'disabled' } },
        'disabled by cli_admin',
      ],
      [
        'every field, of which only the status differs',
        { url: URL_WITH_SECRETS, events: ['principal.*'], description: 'first', status: 'disabled' },
        { status: { from: 'active', to: 'disabled' } },
        'disabled by cli_admin',
      ],
    ];
    for (const [what, patch, changes, reason] of cases) {
      it(`applies ${what} and records only what changed`, async () => {
        const { service, sink, repo } = setup();
        const { id } = await created(service);
        const updated = await service.update(id, patch, op);
        expect(repo.calls).to.include(`update:${reason}`);
        expect(updated.status).to.equal(patch.status ?? 'active');
        if (reason) expect(updated.disabled_reason).to.equal(reason);
        expect(sink.events.slice(1)).to.deep.equal([
          { type: 'webhook.updated', target: { type: 'webhook', id }, changes, op },
        ]);
        expect(JSON.stringify(sink.events)).to.not.include('s3cr3t');
      });
    }

    it('enables a disabled webhook with no reason, starting it afresh', async () => {
      const { service, sink, repo } = setup();
      const { id } = await created(service);
      await service.update(id, { status: 'disabled' }, op);
      repo.webhooks.get(id)!.failure_count = 7;
      const enabled = await service.update(id, { status: 'active' }, op);
      expect(repo.calls.filter((c) => c.startsWith('update:'))).to.deep.equal([
        'update:disabled by cli_admin',
        'update:null',
      ]);
      expect(enabled).to.include({ status: 'active', failure_count: 0 });
      expect(enabled).to.not.have.property('disabled_reason');
      expect(sink.events.at(-1)!.changes).to.deep.equal({ status: { from: 'disabled', to: 'active' } });
    });

    it('records nothing for a patch that changes nothing', async () => {
      const { service, sink } = setup();
      const { id } = await created(service);
      await service.update(id, { url: URL_WITH_SECRETS, events: ['principal.*'], description: 'first' }, op);
      expect(sink.types()).to.deep.equal(['webhook.created']);
    });

    it('answers NOT_FOUND for an unknown webhook', async () => {
      const { service, sink } = setup();
      const id = newId('webhook');
      const err = expectCode(await rejection(service.update(id, { description: 'x' }, op)), 'NOT_FOUND');
      expect(err.message).to.equal(`webhook ${id} does not exist`);
      expect(sink.events).to.deep.equal([]);
    });

    const refusals: [string, UpdateWebhookInput, string][] = [
      ['a refused URL', { url: 'https://192.168.0.1/' }, '/url'],
      ['an unknown event type', { events: ['principal.exploded'] }, '/events/0'],
    ];
    for (const [what, patch, pointer] of refusals) {
      it(`refuses ${what} before opening a transaction`, async () => {
        const { service, db, repo } = setup();
        const { id } = await created(service);
        const units = db.units.length;
        const err = expectCode(await rejection(service.update(id, patch, op)), 'VALIDATION_FAILED');
        expect(err.errors!.map((e) => e.pointer)).to.deep.equal([pointer]);
        expect(db.units).to.have.length(units);
        expect(repo.calls.filter((c) => c.startsWith('update'))).to.deep.equal([]);
      });
    }
  });

  describe('delete', () => {
    it('removes the webhook and records webhook.deleted with its status change, without the URL in clear', async () => {
      const { service, sink, repo } = setup();
      const { id } = await created(service);
      const deleted = await service.delete(id, operation('cli_deleter'));
      expect(deleted).to.include({ id, status: 'deleted', deleted_by: 'cli_deleter' });
      expect(repo.webhooks.has(id)).to.equal(false);
      expect(sink.types()).to.deep.equal(['webhook.created', 'webhook.deleted']);
      expect(sink.events[1]!.target).to.deep.equal({ type: 'webhook', id });
      expect(sink.events[1]!.changes!['status']).to.deep.equal({ from: 'active', to: 'deleted' });
      expect(sink.events[1]!.changes!['url']).to.deep.equal({ from: audited(URL_WITH_SECRETS) });
    });

    it('answers NOT_FOUND for an unknown webhook', async () => {
      const { service, repo } = setup();
      expectCode(await rejection(service.delete(newId('webhook'), op)), 'NOT_FOUND');
      expect(repo.calls).to.not.include('delete');
    });
  });

  describe('rotateSecret', () => {
    it('answers a new secret; both sign for a day; records webhook.secret_rotated without secrets', async () => {
      const { service, sink, repo } = setup();
      const { id, secret: first } = await created(service);
      const rotated = await service.rotateSecret(id, op);
      expect(rotated.secret)
        .to.match(/^whsec_/)
        .and.not.equal(first);
      expect(Date.parse(rotated.previous_secret_expires_at) - Date.now()).to.be.closeTo(DAY_MS, 5_000);
      const row = repo.webhooks.get(id)!;
      expect(row.previous_secret_until).to.equal(rotated.previous_secret_expires_at);
      expect(signingSecrets(kek, row)).to.deep.equal([rotated.secret, first]);
      expect(signingSecrets(kek, row, Date.now() + DAY_MS + 60_000)).to.deep.equal([rotated.secret]);
      expect(sink.events.at(-1)).to.deep.equal({
        type: 'webhook.secret_rotated',
        target: { type: 'webhook', id },
        op,
      });
    });

    it('answers NOT_FOUND for an unknown webhook', async () => {
      const { service, repo } = setup();
      expectCode(await rejection(service.rotateSecret(newId('webhook'), op)), 'NOT_FOUND');
      expect(repo.calls).to.not.include('rotateSecret');
    });
  });

  describe('test', () => {
    const results: [string, SendResult][] = [
      ['a success', { statusCode: 204, success: true, error: null, durationMs: 12.4, responseBody: '' }],
      [
        'a refusal',
        { statusCode: 500, success: false, error: 'HTTP 500', durationMs: 30.6, responseBody: 'no' },
      ],
      [
        'no answer',
        { statusCode: null, success: false, error: 'timed out', durationMs: 10_000, responseBody: '' },
      ],
    ];
    for (const [what, result] of results) {
      it(`sends a signed webhook.test event and logs ${what} as attempt 1, with no audit event`, async () => {
        const { service, sink, repo, transport, db } = setup();
        const { id, secret } = await created(service);
        transport.answer = result;
        const answer = await service.test(id, operation('cli_tester'));

        expect(transport.sent).to.have.length(1);
        const sent = transport.sent[0]!;
        expect(sent.url).to.equal(URL_WITH_SECRETS);
        const payload = new Webhook(secret).verify(sent.body, sent.headers) as {
          type: string;
          data: { type: string; actor: unknown; target: unknown; changes: unknown };
        };
        expect(payload.type).to.equal('webhook.test');
        expect(payload.data).to.include({ type: 'webhook.test', changes: null });
        expect(payload.data.actor).to.deep.equal({ type: 'client', id: 'cli_tester' });
        expect(payload.data.target).to.deep.equal({ type: 'webhook', id });

        expect(repo.tests).to.have.length(1);
        const delivery = repo.tests[0]!;
        expect(delivery).to.include({
          webhook_id: id,
          event_type: 'webhook.test',
          attempt: 1,
          success: result.success,
          status_code: result.statusCode,
          error: result.error,
          duration_ms: Math.round(result.durationMs),
          next_attempt_at: null,
        });
        expect(answer).to.deep.equal({
          delivery_id: delivery.id,
          success: result.success,
          status_code: result.statusCode,
          duration_ms: Math.round(result.durationMs),
          error: result.error,
        });
        expect(db.units.at(-1)).to.equal('write:webhooks/record_test');
        expect(sink.types()).to.deep.equal(['webhook.created']);
      });
    }

    it('signs with the previous secret too while it overlaps', async () => {
      const { service, transport } = setup();
      const { id, secret: first } = await created(service);
      await service.rotateSecret(id, op);
      await service.test(id, op);
      const sent = transport.sent[0]!;
      expect(() => new Webhook(first).verify(sent.body, sent.headers)).to.not.throw();
    });

    it('answers NOT_FOUND for an unknown webhook and sends nothing', async () => {
      const { service, transport, repo } = setup();
      expectCode(await rejection(service.test(newId('webhook'), op)), 'NOT_FOUND');
      expect(transport.sent).to.deep.equal([]);
      expect(repo.tests).to.deep.equal([]);
    });
  });

  describe('list and deliveries', () => {
    it('lists with an absent status as null', async () => {
      const { service, repo } = setup();
      await created(service);
      const listed = await service.list(undefined, FIRST_PAGE);
      expect(listed.total).to.equal(1);
      expect(listed.items[0]).to.not.have.property('secret_sealed');
      await service.list('disabled', FIRST_PAGE);
      expect(repo.calls.filter((c) => /^(count|page):/.test(c))).to.deep.equal([
        'count:null',
        'page:null',
        'count:disabled',
        'page:disabled',
      ]);
    });

    it('reads deliveries of a known webhook with absent filters as null', async () => {
      const { service, repo } = setup();
      const { id } = await created(service);
      await service.deliveries(id, {}, FIRST_PAGE);
      await service.deliveries(id, { eventId: 'evt_1', success: false }, FIRST_PAGE);
      expect(repo.calls.filter((c) => /^(countD|d)eliveries:/.test(c))).to.deep.equal([
        `countDeliveries:${id}:null:null`,
        `deliveries:${id}:null:null:0`,
        `countDeliveries:${id}:evt_1:false`,
        `deliveries:${id}:evt_1:false:0`,
      ]);
    });

    it('answers NOT_FOUND for the deliveries of an unknown webhook', async () => {
      const { service, repo } = setup();
      expectCode(await rejection(service.deliveries(newId('webhook'), {}, FIRST_PAGE)), 'NOT_FOUND');
      expect(repo.calls.filter((c) => c.includes('eliveries'))).to.deep.equal([]);
    });
  });
});
