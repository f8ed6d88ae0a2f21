import { useEffect, useState } from 'preact/hooks';

/** The console's own paths live under this base; the service serves the page for all of them. */
export const BASE = '/console';

export interface Location {
  /** The path below the base, always starting with `/`. */
  path: string;
  query: URLSearchParams;
  /** What the page that navigated here left in the history entry (see navigate), else null. */
  state: unknown;
}

function read(): Location {
  const raw = window.location.pathname;
  const below = raw.startsWith(BASE) ? raw.slice(BASE.length) : raw;
  return {
    path: below === '' ? '/' : below,
    query: new URLSearchParams(window.location.search),
    state: window.history.state as unknown,
  };
}

const listeners = new Set<() => void>();

/**
 * Goes to a console path (below the base), keeping the back button meaningful. `state` is kept
 * with the history entry, for what is too large for the address; back and forward restore it.
 */
export function navigate(to: string, options: { replace?: boolean; state?: unknown } = {}): void {
  const url = `${BASE}${to.startsWith('/') ? to : `/${to}`}`;
  const state = options.state ?? null;
  if (options.replace) window.history.replaceState(state, '', url);
  else window.history.pushState(state, '', url);
  for (const l of listeners) l();
}

window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export function useLocation(): Location {
  const [location, setLocation] = useState(read);
  useEffect(() => {
    const update = (): void => setLocation(read());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return location;
}

/** The href of a console path, for links that also work opened in a new tab. */
export const href = (to: string): string => `${BASE}${to}`;

/** The console page of a resource: who can reach it. */
export const resourcePath = (type: string, identifier: string): string =>
  `/resources?type=${encodeURIComponent(type)}&identifier=${encodeURIComponent(identifier)}`;

/** Matches `pattern` (segments, `:name` captures) against a path; the captures, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < want.length; i += 1) {
    const w = want[i]!;
    const h = have[i]!;
    if (w.startsWith(':')) {
      try {
        out[w.slice(1)] = decodeURIComponent(h);
      } catch {
        return null; // a malformed escape names no page
      }
    } else if (w !== h) return null;
  }
  return out;
}
