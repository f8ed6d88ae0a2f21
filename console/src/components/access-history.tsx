import { useEffect, useState } from 'preact/hooks';
import { get, type Query } from '../api';
import { resourcePath } from '../router';
import type { RecordedChange, RecordedChangeList } from '../types';
import { Actor, Cause } from './as-of';
import { Grants } from './grants';
import {
  ActionChips,
  Badge,
  Gate,
  heads,
  Link,
  Panel,
  ProblemBox,
  Shown,
  Table,
  useLoad,
  when,
  whenExact,
} from './ui';

/** Changes a page of the history holds. */
const PER_PAGE = 20;

/** The latest changes, and the page of the history (oldest first) they are. */
interface Latest {
  changes: RecordedChange[];
  page: number;
  total: number;
  horizon: string;
}

/**
 * The latest page of the changes that match `filter`: the history is listed oldest first, so the
 * first page says how many pages there are, and the last one is read when it is not the first.
 */
async function latestPage(filter: Query, signal: AbortSignal): Promise<Latest> {
  const list = (page: number): Promise<RecordedChangeList> =>
    get<RecordedChangeList>('/v1/access-changes', { ...filter, page, limit: PER_PAGE }, signal);
  const first = await list(1);
  const pages = first.pagination.pages;
  const last = pages > 1 ? await list(pages) : first;
  return {
    changes: last.data,
    page: Math.max(pages, 1),
    total: last.pagination.total,
    horizon: last.pagination.horizon,
  };
}

/**
 * The access changes of a principal or of a resource, newest first, with their causes; earlier
 * pages are loaded on demand. Needs `audit:read`.
 */
export function AccessHistory(props: {
  filter: { principal_id: string } | { resource_type: string; identifier: string };
  /** What each row names besides the change: the resource (on a principal's page) or the principal. */
  shows: 'resource' | 'principal';
}) {
  return (
    <Panel id="history" title="Access history">
      <Gate feature="history">
        <Timeline {...props} />
      </Gate>
    </Panel>
  );
}

function Timeline(props: Parameters<typeof AccessHistory>[0]) {
  const key = JSON.stringify(props.filter);
  const loaded = useLoad((signal) => latestPage(props.filter, signal), [key]);
  return (
    <Shown loaded={loaded} what="the access history" context="Access history">
      {(data) => (
        <Changes
          key={`${key}:${data.page}:${data.total}`}
          latest={data}
          shows={props.shows}
          filter={props.filter}
          onRefresh={loaded.reload}
          busy={loaded.loading}
        />
      )}
    </Shown>
  );
}

function Changes(props: {
  latest: Latest;
  filter: Query;
  shows: 'resource' | 'principal';
  busy: boolean;
  onRefresh: () => void;
}) {
  const { latest } = props;
  /** Earlier pages loaded so far, the earliest first; `next` is the page Load earlier reads. */
  const [earlier, setEarlier] = useState<{
    changes: RecordedChange[];
    next: number;
    busy: boolean;
    error?: unknown;
  }>({ changes: [], next: latest.page - 1, busy: false });
  const [controller] = useState(() => new AbortController());
  useEffect(() => () => controller.abort(), [controller]);

  const loadEarlier = (): void => {
    const page = earlier.next;
    setEarlier({ ...earlier, busy: true, error: undefined });
    get<RecordedChangeList>(
      '/v1/access-changes',
      { ...props.filter, page, limit: PER_PAGE },
      controller.signal,
    ).then(
      (list) =>
        setEarlier((e) => {
          const seen = new Set([...e.changes, ...latest.changes].map((c) => c.id));
          return {
            changes: [...list.data.filter((c) => !seen.has(c.id)), ...e.changes],
            next: page - 1,
            busy: false,
          };
        }),
      (error: unknown) => !controller.signal.aborted && setEarlier((e) => ({ ...e, busy: false, error })),
    );
  };

  const rows = [...earlier.changes, ...latest.changes].reverse();
  return (
    <>
      <p class="muted history-summary">
        {latest.total.toLocaleString()} {latest.total === 1 ? 'change' : 'changes'} recorded, newest first;
        none from before <time dateTime={latest.horizon}>{when(latest.horizon)}</time> is kept.{' '}
        <button type="button" class="secondary small" onClick={props.onRefresh} disabled={props.busy}>
          Refresh
        </button>
      </p>
      <Table
        class="history"
        head={heads(
          'When',
          props.shows === 'resource' ? 'Resource' : 'Principal',
          'Change',
          'Cause',
          'By',
          'Through policies',
        )}
        rows={rows.length}
        empty="No access change is recorded."
        busy={props.busy || earlier.busy}
      >
        {rows.map((c) => (
          <tr key={c.id} data-change={c.id}>
            <td>
              <time dateTime={c.at}>{whenExact(c.at)}</time>
            </td>
            <td>
              {props.shows === 'resource' ? (
                <>
                  <Link to={resourcePath(c.resource.type, c.resource.identifier)}>
                    <code>
                      {c.resource.type}:{c.resource.identifier}
                    </code>
                  </Link>
                  {c.resource.pattern && <span class="muted"> (glob)</span>}
                </>
              ) : (
                <>
                  <Link to={`/principals/${c.principal.id}`}>{c.principal.name || c.principal.id}</Link>{' '}
                  <Badge kind={c.principal.type}>{c.principal.type}</Badge>
                </>
              )}
              {c.on_behalf_of && (
                <div class="muted" data-on-behalf-of={c.on_behalf_of.id}>
                  acting for{' '}
                  <Link to={`/principals/${c.on_behalf_of.id}`}>
                    {c.on_behalf_of.name || c.on_behalf_of.id}
                  </Link>
                </div>
              )}
            </td>
            <td class="moved">
              <ActionChips gained={c.actions_gained} lost={c.actions_lost} />
            </td>
            <td>
              <Cause cause={c.cause} />
            </td>
            <td>
              <Actor actor={c.cause.actor} />
            </td>
            <td>{c.via.length === 0 ? <span class="muted">none named</span> : <Grants grants={c.via} />}</td>
          </tr>
        ))}
      </Table>
      {earlier.error !== undefined && <ProblemBox error={earlier.error} context="Earlier changes" />}
      {earlier.next >= 1 && (
        <p class="load-earlier">
          <button type="button" class="secondary" onClick={loadEarlier} disabled={earlier.busy}>
            {earlier.busy ? 'Loading earlier changes…' : 'Load earlier'}
          </button>{' '}
          <span class="muted" aria-live="polite">
            {rows.length.toLocaleString()} of {latest.total.toLocaleString()} shown
          </span>
        </p>
      )}
    </>
  );
}
