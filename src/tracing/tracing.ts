import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';

export { SpanKind, SpanStatusCode, type Attributes, type Span };

/**
 * OpenTelemetry traces of the service (docs/operations.md#traces). Off unless an OTLP endpoint is
 * configured: then every entry point below is a test of one module variable and a direct call,
 * so the decision path pays nothing for the feature it does not use. On, a process has one
 * provider, one context manager (AsyncLocalStorage, so a span started in a route is the parent
 * of the transactions that route runs, however deep) and the W3C trace-context propagator.
 */
let tracer: Tracer | undefined;
let provider: TracerProvider | undefined;
let contextManager: AsyncLocalStorageContextManager | undefined;

export interface TracingOptions {
  serviceName: string;
  serviceVersion: string;
  /** What each process is, on its spans (`serving`, `background`, `single`). */
  processRole?: string;
  /** Share of new traces kept (a trace whose caller sampled it is always kept): 0 to 1. */
  sampleRatio: number;
  /** Where spans go; by default OTLP over HTTP, configured by the standard OTEL_EXPORTER_OTLP_* variables. */
  exporter?: SpanExporter;
  /** Export each span as it ends instead of in batches (tests read them at once). */
  immediate?: boolean;
}

/** Starts tracing in this process; a second start replaces the first. */
export async function startTracing(options: TracingOptions): Promise<void> {
  await stopTracing();
  const exporter = options.exporter ?? new OTLPTraceExporter();
  provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName,
      'service.version': options.serviceVersion,
      'process.pid': process.pid,
      ...(options.processRole ? { 'pas.process.role': options.processRole } : {}),
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio) }),
    spanProcessors: [
      options.immediate ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter }),
    ],
  });
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer('principals-access-service', options.serviceVersion);
}

/** Sends the spans still buffered and stops tracing in this process. */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  tracer = undefined;
  provider = undefined;
  trace.disable();
  propagation.disable();
  context.disable();
  contextManager = undefined;
  // An unreachable collector must not hold a stop up: the exporter gives up after its own timeout.
  if (stopping)
    await Promise.race([stopping.shutdown(), new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
}

/** How long a stop waits for the last spans to be sent. */
const STOP_WAIT_MS = 5_000;

/** The trace the current work belongs to, for its log lines; undefined without tracing. */
export function currentTraceId(): string | undefined {
  if (!tracer) return undefined;
  return trace.getSpan(context.active())?.spanContext().traceId;
}

/** Whether this process traces: hot paths test this before building a span's attributes. */
export function tracing(): boolean {
  return tracer !== undefined;
}

/**
 * Runs `work` in a span of its own, a child of the span current where it is called (or of
 * `parent`, a W3C `traceparent` a request or a stored job carried). The span records a thrown
 * error and ends when `work` settles. Without tracing, `work` runs as it is, given no span.
 */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: string | null },
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const active = tracer;
  if (!active) return work(undefined);
  const parentContext = options.parent ? contextOf(options.parent) : context.active();
  return active.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} },
    parentContext,
    async (span) => {
      try {
        return await work(span);
      } catch (err) {
        failed(span, err);
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** `inSpan` for synchronous work, such as a decision answered from memory. */
export function inSpanSync<T>(
  name: string,
  attributes: Attributes,
  work: () => T,
  describe: (span: Span, value: T) => void,
): T {
  const active = tracer;
  if (!active) return work();
  const span = active.startSpan(name, { attributes }, context.active());
  try {
    const value = work();
    describe(span, value);
    return value;
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span failed by `err`. */
export function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/**
 * The server span of a request: started before the request is routed (its name and route are
 * set once known), a child of the caller's `traceparent` when it sends one. `work` runs with it
 * current.
 */
export function serverSpan<T>(
  headers: Record<string, string | string[] | undefined>,
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const active = tracer!;
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = active.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return context.with(trace.setSpan(parent, span), () => work(span));
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A `traceparent` header as W3C Trace Context version 00 writes it, or null (all-zero ids are invalid). */
export function wellFormedTraceparent(value: string | undefined): string | null {
  if (!value) return null;
  const match = TRACEPARENT.exec(value.trim());
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return null;
  return match[0];
}

/**
 * The `traceparent` to keep with work done later for the current request (its audit events,
 * which webhooks deliver, and the jobs it queues): the current span's when tracing, else the
 * caller's own header passed through unchanged, so that a receiver still joins the caller's trace.
 */
export function currentTraceparent(incoming: string | null): string | null {
  if (!tracer) return incoming;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier['traceparent'] ?? incoming;
}

/** Headers carrying the current span to a receiver; `stored` when not tracing. */
export function outgoingTraceHeaders(stored: string | null | undefined): Record<string, string> {
  if (!tracer) return stored ? { traceparent: stored } : {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

function contextOf(traceparent: string): Context {
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}
