import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Problem } from '../api';
import { href, navigate } from '../router';
import { missingScope, type Feature } from '../scopes';
import { useSession } from '../session';

/** A link inside the console: a real href (new tabs work), navigation without a reload. */
export function Link(props: {
  to: string;
  children: ComponentChildren;
  class?: string;
  label?: string;
  current?: boolean;
}) {
  return (
    <a
      href={href(props.to)}
      class={props.class}
      aria-label={props.label}
      aria-current={props.current ? 'page' : undefined}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}

/** Shows its children when the token holds the feature's scope, else a greyed panel saying why. */
export function Gate(props: { feature: Feature; children: ComponentChildren; compact?: boolean }) {
  const session = useSession();
  const reason = session ? missingScope(session.scopes, props.feature) : 'Sign in first.';
  if (!reason) return <>{props.children}</>;
  return (
    <div
      class={props.compact ? 'gated compact' : 'gated'}
      role="note"
      aria-disabled="true"
      data-gated={props.feature}
    >
      <strong>Not available.</strong> {reason}
    </div>
  );
}

export function problemOf(error: unknown): Problem {
  if (error instanceof ApiError) return error.problem;
  return {
    status: 0,
    title: 'Request failed',
    detail: error instanceof Error ? error.message : String(error),
  };
}

/** An API error as the analyst should read it: what failed, why, and where in the request. */
export function ProblemBox(props: { error: unknown; context?: string }) {
  const p = problemOf(props.error);
  return (
    <div class="problem" role="alert">
      <strong>
        {props.context ? `${props.context}: ` : ''}
        {p.title}
        {p.status ? ` (${p.status})` : ''}
      </strong>
      {p.detail && <p>{p.detail}</p>}
      {p.errors && p.errors.length > 0 && (
        <ul>
          {p.errors.map((e) => (
            <li key={e.pointer + e.message}>
              <code>{e.pointer || '/'}</code> {e.message}
            </li>
          ))}
        </ul>
      )}
      {p.request_id && <p class="muted">Request id {p.request_id}</p>}
    </div>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Loads with `load` whenever `deps` change; stale answers of earlier deps are dropped. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  // The caller's deps decide when to load again, as with useEffect.
  const run = useCallback(load, deps);
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    run(controller.signal).then(
      (data) => !controller.signal.aborted && setState({ data, loading: false }),
      (error: unknown) => !controller.signal.aborted && setState({ error, loading: false }),
    );
    return () => controller.abort();
  }, [run, tick]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    reload: () => setTick((t) => t + 1),
  };
}

/**
 * What a load shows in each of its states: the problem when it failed, a note while the first
 * answer is awaited, then whatever `children` makes of the data (kept while a reload runs).
 */
export function Shown<T>(props: {
  loaded: Loaded<T>;
  what: string;
  context: string;
  children: (data: T) => ComponentChildren;
}) {
  const { loaded } = props;
  return (
    <>
      {loaded.error !== undefined && <ProblemBox error={loaded.error} context={props.context} />}
      {loaded.data === undefined && loaded.loading && <Loading what={props.what} />}
      {loaded.data !== undefined && props.children(loaded.data)}
    </>
  );
}

/** A table of rows with its header cells, saying `empty` when there is no row. */
export function Table(props: {
  head: ComponentChildren;
  rows: number;
  empty: string;
  busy?: boolean;
  class?: string;
  children: ComponentChildren;
}) {
  return (
    <table class={`grid${props.class ? ` ${props.class}` : ''}`} aria-busy={props.busy}>
      <thead>
        <tr>{props.head}</tr>
      </thead>
      <tbody>
        {props.rows === 0 && (
          <tr>
            <td colSpan={99} class="empty">
              {props.empty}
            </td>
          </tr>
        )}
        {props.children}
      </tbody>
    </table>
  );
}

/** Header cells from their labels. */
export const heads = (...labels: string[]): ComponentChildren => labels.map((l) => <th key={l}>{l}</th>);

export function Pager(props: {
  page: number;
  pages: number;
  total: number;
  onPage: (page: number) => void;
  label: string;
}) {
  const { page, pages, total } = props;
  return (
    <nav class="pager" aria-label={`${props.label} pages`}>
      <button type="button" disabled={page <= 1} onClick={() => props.onPage(page - 1)}>
        ← Previous
      </button>
      <span aria-live="polite">
        Page {pages === 0 ? 0 : page} of {pages} · {total.toLocaleString()} in all
      </span>
      <button type="button" disabled={page >= pages} onClick={() => props.onPage(page + 1)}>
        Next →
      </button>
    </nav>
  );
}

export function Loading(props: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {props.what}…
    </p>
  );
}

/** A section of a page with a heading; its id lets the page's contents link to it. */
export function Panel(props: {
  id?: string;
  title: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <section class="panel" id={props.id} aria-labelledby={props.id ? `${props.id}-title` : undefined}>
      <header class="panel-head">
        <h2 id={props.id ? `${props.id}-title` : undefined}>{props.title}</h2>
        {props.actions}
      </header>
      {props.children}
    </section>
  );
}

export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—';

/** An instant to the second, in UTC: for what may change several times a minute. */
export const whenExact = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '—';

/** Actions gained in green (+) and lost in red (−). */
export function ActionChips(props: { gained: string[]; lost: string[] }) {
  return (
    <>
      {props.gained.map((a) => (
        <span key={`+${a}`} class="gained" title="gained">
          + {a}
        </span>
      ))}
      {props.lost.map((a) => (
        <span key={`-${a}`} class="lost" title="lost">
          − {a}
        </span>
      ))}
    </>
  );
}

export function Badge(props: { kind: string; children: ComponentChildren }) {
  return (
    <span class={`badge badge-${props.kind.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`}>
      {props.children}
    </span>
  );
}

/**
 * Moves focus to the page's main heading once it is shown (a page may load before it has one),
 * as a full page load would put the reader at its top: a ref callback for the heading.
 */
export function useFocusHeading(key: string) {
  const focusedFor = useRef<string | null>(null);
  return useCallback(
    (heading: HTMLHeadingElement | null) => {
      if (heading && focusedFor.current !== key) {
        focusedFor.current = key;
        heading.focus();
      }
    },
    [key],
  );
}
