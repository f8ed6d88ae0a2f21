import { expect } from 'chai';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startTracing, stopTracing } from '../../src/tracing/tracing.js';
import { useApp } from '../helpers/fixture.js';
import { namer } from '../helpers/engine.js';
import { HttpClient } from '../helpers/http.js';
import { Receiver, type Received } from '../helpers/receiver.js';
import { syncSnapshot } from '../helpers/sync.js';
import { eventually } from '../helpers/wait.js';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

/** A caller's trace: its id, and the span it calls from. */
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

describe('traces (OpenTelemetry)', () => {
  const exporter = new InMemorySpanExporter();
  const receiver = new Receiver();
  const { uniq, type } = namer();

  // Tracing is started before the service, as the service's own start does when an OTLP endpoint
  // is configured; the spans go to memory instead of an OTLP receiver.
  before(async () => {
    await startTracing({
      serviceName: 'pas-test',
      serviceVersion: '0.0.0',
      sampleRatio: 1,
      exporter,
      immediate: true,
    });
    await receiver.start();
  });
  const fx = useApp({ env: { WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' } });
  after(async () => {
    await stopTracing();
    await receiver.stop();
  });
  beforeEach(() => exporter.reset());

  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  const inTrace = (traceId: string): ReadableSpan[] =>
    spans().filter((s) => s.spanContext().traceId === traceId);
  const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

  /** Runs `work` with a webhook of principal creations delivering to the receiver. */
  async function withWebhook(work: (webhookId: string) => Promise<void>): Promise<void> {
    const hook = await fx.api.post('/v1/webhooks', { url: receiver.url, events: ['principal.created'] });
    expect(hook.status, hook.text).to.equal(201);
    try {
      receiver.received.length = 0;
      await work(hook.body.id);
    } finally {
      await fx.api.delete(`/v1/webhooks/${hook.body.id}`);
    }
  }

  /** Creates a principal in the caller's trace and waits for the delivery of its event. */
  async function deliveryOfCreate(name: string): Promise<Received> {
    const created = await fx.api.post(
      '/v1/principals',
      { type: 'SERVICE_ACCOUNT', name },
      { headers: { traceparent: TRACEPARENT } },
    );
    expect(created.status, created.text).to.equal(201);
    const { value } = await eventually(
      async () => receiver.received.find((r) => r.body.includes(created.body.id)),
      (r) => r !== undefined,
      10_000,
    );
    return value!;
  }

  async function allowReads(principal: string, resourceType: string): Promise<string> {
    const policy = await fx.api.post('/v1/policies', {
      name: uniq('traced'),
      effect: 'allow',
      subjects: { principals: [principal] },
      actions: ['read'],
      resources: [{ type: resourceType, identifier: 'doc' }],
    });
    expect(policy.status, policy.text).to.equal(201);
    return policy.body.id;
  }

  it('continues the caller’s trace: the route’s span, its decision with the policies, under the caller’s span', async () => {
    const principal = await fx.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: uniq('sa') });
    expect(principal.status, principal.text).to.equal(201);
    const t = type();
    const policyId = await allowReads(principal.body.id, t);
    exporter.reset();

    const res = await fx.api.post(
      '/v1/decisions/evaluate',
      { principal_id: principal.body.id, action: 'read', resource: { type: t, identifier: 'doc' } },
      { headers: { traceparent: TRACEPARENT } },
    );
    expect(res.status, res.text).to.equal(200);
    expect(res.body.decision).to.equal('ALLOW');

    const server = await eventually(
      async () => inTrace(CALLER_TRACE).find((s) => s.name === 'POST /v1/decisions/evaluate'),
      (s) => s !== undefined,
      5_000,
    ).then((r) => r.value!);
    expect(parentOf(server)).to.equal(CALLER_SPAN);
    expect(server.attributes['http.route']).to.equal('/v1/decisions/evaluate');
    expect(server.attributes['http.response.status_code']).to.equal(200);
    expect(server.attributes['pas.request_id']).to.equal(res.headers.get('x-request-id'));

    const decision = inTrace(CALLER_TRACE).find((s) => s.name === 'decision');
    expect(decision, 'a decision span').to.not.equal(undefined);
    expect(parentOf(decision!)).to.equal(server.spanContext().spanId);
    expect(decision!.attributes['pas.decision']).to.equal('ALLOW');
    expect(decision!.attributes['pas.decision.id']).to.equal(res.body.id);
    expect(decision!.attributes['pas.decision.policy_ids']).to.deep.equal([policyId]);
    expect(decision!.attributes['pas.principal.id']).to.equal(principal.body.id);
  });

  it('starts a trace of its own for a caller that sends none, with a span for each Neo4j transaction', async () => {
    const res = await fx.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: uniq('sa') });
    expect(res.status, res.text).to.equal(201);
    const server = await eventually(
      async () => spans().find((s) => s.name === 'POST /v1/principals'),
      (s) => s !== undefined,
      5_000,
    ).then((r) => r.value!);
    expect(server.parentSpanContext).to.equal(undefined);
    const traceId = server.spanContext().traceId;
    const writes = inTrace(traceId).filter((s) => s.name.startsWith('neo4j write '));
    expect(writes, 'the create’s transaction').to.have.length.greaterThan(0);
    for (const write of writes) {
      expect(parentOf(write)).to.equal(server.spanContext().spanId);
      expect(write.attributes['db.system.name']).to.equal('neo4j');
      expect(write.attributes['db.operation.name']).to.equal('write');
    }
  });

  it('sends the trace on a webhook delivery, which joins the trace of the request behind the event', async () => {
    await withWebhook(async (webhookId) => {
      const delivery = await deliveryOfCreate(uniq('hooked'));
      const sent = String(delivery.headers['traceparent']);
      const [, traceId, spanId] = sent.split('-');
      expect(traceId, sent).to.equal(CALLER_TRACE);
      const deliverSpan = await eventually(
        async () => inTrace(CALLER_TRACE).find((s) => s.name === 'webhook deliver'),
        (s) => s !== undefined,
        5_000,
      ).then((r) => r.value!);
      // The receiver's parent is the delivery span, itself within the request's trace.
      expect(deliverSpan.spanContext().spanId).to.equal(spanId);
      expect(deliverSpan.attributes['pas.webhook.id']).to.equal(webhookId);
      expect(deliverSpan.attributes['pas.event.type']).to.equal('principal.created');
      expect(deliverSpan.attributes['http.response.status_code']).to.equal(204);
      const server = inTrace(CALLER_TRACE).find((s) => s.name === 'POST /v1/principals');
      expect(server, 'the request’s span').to.not.equal(undefined);
    });
  });

  it('follows a SCIM sync from the upload through its job', async () => {
    const connector = await fx.api.post('/v1/connectors', { name: uniq('traced-idp') });
    expect(connector.status, connector.text).to.equal(201);
    const lines = [0, 1, 2].map((i) =>
      JSON.stringify({ schemas: [USER], userName: `${uniq('u')}-${i}@example.com`, active: true }),
    );
    await syncSnapshot(
      new HttpClient(fx.api.baseUrl, { token: fx.token, headers: { traceparent: TRACEPARENT } }),
      connector.body.id,
      lines.join('\n'),
    );
    const sync = await eventually(
      async () => inTrace(CALLER_TRACE).find((s) => s.name === 'scim sync'),
      (s) => s !== undefined,
      5_000,
    ).then((r) => r.value!);
    expect(sync.attributes['pas.connector.id']).to.equal(connector.body.id);
    expect(sync.attributes['pas.sync.users_created']).to.equal(3);
    const job = inTrace(CALLER_TRACE).find((s) => s.spanContext().spanId === parentOf(sync));
    expect(job?.name).to.equal('job connectors.sync');
    const upload = inTrace(CALLER_TRACE).find((s) => s.spanContext().spanId === parentOf(job!));
    expect(upload, 'the upload’s request, or a transaction within it').to.not.equal(undefined);
  });

  it('sends nothing once tracing stops, and passes a caller’s trace through to webhooks without it', async () => {
    await stopTracing();
    await withWebhook(async () => {
      const delivery = await deliveryOfCreate(uniq('untraced'));
      expect(delivery.headers['traceparent']).to.equal(TRACEPARENT);
      expect(spans()).to.deep.equal([]);
    });
  });
});
