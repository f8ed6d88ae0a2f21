import { useState } from 'preact/hooks';
import { get, seg } from '../api';
import { AccessHistory } from '../components/access-history';
import { AsOfNote, AsOfPicker, GrantedByEvent } from '../components/as-of';
import { RelationshipGraph } from '../components/graph';
import { Grants } from '../components/grants';
import { PrincipalRef } from '../components/principal-ref';
import {
  Badge,
  Gate,
  heads,
  Link,
  Pager,
  Panel,
  Shown,
  Table,
  useFocusHeading,
  useLoad,
  when,
  whenExact,
} from '../components/ui';
import { navigate, resourcePath } from '../router';
import type {
  AccessEntry,
  AccessRecord,
  AuditEvent,
  Delegation,
  List,
  Principal,
  PrincipalDelegations,
  Relationship,
  RelationshipRecord,
} from '../types';

/** What each risk factor means, for the analyst reading the score. */
const FACTORS: Record<string, string> = {
  NO_OWNER: 'No owner is recorded (metadata.owner is unset).',
  ORPHANED: 'Its owner names nobody, or someone deprovisioned or deleted.',
  NEVER_LOGGED_IN: 'Has never logged in.',
  DORMANT: 'Has not logged in for more than 90 days.',
  BROAD_TOOL_ACCESS: 'May use any tool, or very many of them.',
  HIGH_RISK_CAPABILITY: 'Has capabilities such as code execution.',
  SUSPENDED: 'Suspended.',
  PRIVILEGED_ACCESS: 'Holds privileged actions through its policies.',
  BROAD_ACCESS: 'Reaches very many resources, or resources by wide patterns.',
  DELEGATION_ORPHANED: 'Acts for someone no longer active, or holds delegations while its owner is gone.',
};

function Record(props: { p: Principal }) {
  const { p } = props;
  const owner = p.metadata['owner'];
  const manager = typeof p.attributes['manager_id'] === 'string' ? p.attributes['manager_id'] : undefined;
  return (
    <Panel id="record" title="Record">
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{p.id}</code>
        </dd>
        {p.email && (
          <>
            <dt>Email</dt>
            <dd>{p.email}</dd>
          </>
        )}
        {p.description && (
          <>
            <dt>Description</dt>
            <dd>{p.description}</dd>
          </>
        )}
        {p.type !== 'USER' && (
          <>
            <dt>Owner</dt>
            <dd>
              {owner === undefined ? (
                <span class="warn">none recorded</span>
              ) : (
                <PrincipalRef reference={owner} />
              )}
            </dd>
          </>
        )}
        {manager && (
          <>
            <dt>Manager</dt>
            <dd>
              <PrincipalRef reference={manager} />
            </dd>
          </>
        )}
        <dt>Source</dt>
        <dd>{p.connector_source ?? 'API'}</dd>
        <dt>Created</dt>
        <dd>{when(p.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{when(p.updated_at)}</dd>
        <dt>Last login</dt>
        <dd>{when(p.last_login)}</dd>
        {p.deleted_at && (
          <>
            <dt>Deleted</dt>
            <dd>{when(p.deleted_at)}</dd>
          </>
        )}
      </dl>
      <KeyValues title="Attributes" values={p.attributes} />
      <KeyValues title="Metadata" values={p.metadata} />
    </Panel>
  );
}

function KeyValues(props: { title: string; values: Record<string, string | string[]> }) {
  const entries = Object.entries(props.values).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <h3>{props.title}</h3>
      {entries.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <table class="grid compact">
          <tbody>
            {entries.map(([k, v]) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td>{Array.isArray(v) ? v.join(', ') : v}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function Risk(props: { p: Principal }) {
  const { p } = props;
  const level = p.risk_score >= 70 ? 'high' : p.risk_score >= 40 ? 'medium' : 'low';
  return (
    <Panel id="risk" title="Risk">
      <p class={`risk risk-${level}`}>
        <meter
          min={0}
          max={100}
          low={40}
          high={70}
          optimum={0}
          value={p.risk_score}
          aria-label="Risk score"
        />
        <strong>{p.risk_score}</strong> / 100 ({level})
      </p>
      {p.risk_factors.length === 0 ? (
        <p class="muted">No risk factor.</p>
      ) : (
        <ul class="factors">
          {p.risk_factors.map((f) => (
            <li key={f.code}>
              <code>{f.code}</code> +{f.points}{' '}
              {FACTORS[f.code] ? <span class="muted">{FACTORS[f.code]}</span> : null}
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}

function RelationshipList(props: { relationships: Relationship[] }) {
  const groups = props.relationships;
  if (groups.length === 0) return <p class="muted">No manager, reports or groups.</p>;
  return (
    <ul class="relationships">
      {groups.map((r) =>
        r.type === 'manager' ? (
          <li key={`m${r.depth}`}>
            Manager{r.depth > 1 ? ` (${r.depth} up)` : ''}:{' '}
            <Link to={`/principals/${r.principal.id}`}>{r.principal.name}</Link>
          </li>
        ) : (
          <li key={`${r.type}${r.depth}`}>
            {r.type === 'reports' ? `Reports at depth ${r.depth}` : `Groups at depth ${r.depth}`} ({r.count}
            {r.truncated ? ', first 1000 listed' : ''}):{' '}
            {r.principals.map((c, i) => (
              <span key={c.id}>
                {i > 0 && ', '}
                {r.type === 'reports' ? <Link to={`/principals/${c.id}`}>{c.name}</Link> : c.name}
              </span>
            ))}
          </li>
        ),
      )}
    </ul>
  );
}

function Graph(props: { p: Principal }) {
  const [depth, setDepth] = useState(3);
  const rel = useLoad(
    (signal) =>
      get<RelationshipRecord>(`/v1/principals/${seg(props.p.id)}/relationships`, { depth }, signal).then(
        (r) => r.relationships,
      ),
    [props.p.id, depth],
  );
  return (
    <Panel
      id="graph"
      title="Reporting line and groups"
      actions={
        <label class="inline">
          Depth
          <select value={depth} onChange={(e) => setDepth(Number(e.currentTarget.value))}>
            {[1, 2, 3].map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
      }
    >
      <Shown loaded={rel} what="relationships" context="Relationships">
        {(relationships) => (
          <>
            <RelationshipGraph
              subject={props.p}
              relationships={relationships}
              onOpen={(id, kind) => {
                if (kind !== 'group') navigate(`/principals/${id}`);
              }}
            />
            <details open class="as-list">
              <summary>As a list</summary>
              <RelationshipList relationships={relationships} />
            </details>
          </>
        )}
      </Shown>
    </Panel>
  );
}

function How(props: { entry: AccessEntry }) {
  const { entry } = props;
  if (!entry.grants) {
    return (
      <>
        {entry.granted_by.map((id) => (
          <div key={id}>
            <Link to={`/what-if?policy=${id}`}>{id}</Link>
          </div>
        ))}
      </>
    );
  }
  return <Grants grants={entry.grants} />;
}

function Access(props: { p: Principal }) {
  const [page, setPage] = useState(1);
  const [filter, setFilter] = useState({ resource_type: '', action: '' });
  const [draft, setDraft] = useState(filter);
  const [asOf, setAsOf] = useState<string | null>(null);
  const access = useLoad(
    (signal) =>
      get<AccessRecord>(
        `/v1/principals/${seg(props.p.id)}/access`,
        { ...filter, page, limit: 25, explain: true, ...(asOf ? { as_of: asOf } : {}) },
        signal,
      ),
    [props.p.id, page, filter.resource_type, filter.action, asOf],
  );
  return (
    <Panel
      id="access"
      title="Effective access"
      actions={
        <AsOfPicker
          value={asOf}
          onChange={(at) => {
            setPage(1);
            setAsOf(at);
          }}
        />
      }
    >
      <form
        class="inline-form"
        aria-label="Filter access"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(1);
          setFilter(draft);
        }}
      >
        <label>
          Resource type
          <input
            value={draft.resource_type}
            onInput={(e) => setDraft({ ...draft, resource_type: e.currentTarget.value })}
          />
        </label>
        <label>
          Action
          <input
            value={draft.action}
            onInput={(e) => setDraft({ ...draft, action: e.currentTarget.value })}
          />
        </label>
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      <Shown loaded={access} what="access" context={asOf ? `Access as of ${whenExact(asOf)}` : 'Access'}>
        {(data) => {
          const at = data.as_of ?? null;
          return (
            <>
              {at && <AsOfNote at={at} />}
              <Table
                head={heads(
                  'Resource',
                  'Actions',
                  'Granted by, and how',
                  at ? 'Since, and by what' : 'Since',
                )}
                rows={data.access.length}
                empty={
                  at
                    ? `No access as of ${whenExact(at)}.`
                    : `No access${props.p.status !== 'active' ? ` (the principal is ${props.p.status})` : ''}.`
                }
                busy={access.loading}
              >
                {data.access.map((e) => (
                  <tr key={`${e.resource.type}:${e.resource.identifier}`}>
                    <td>
                      <Link to={resourcePath(e.resource.type, e.resource.identifier)}>
                        <code>
                          {e.resource.type}:{e.resource.identifier}
                        </code>
                      </Link>
                      {e.pattern && <Badge kind="pattern">pattern</Badge>}
                      {e.conditional && <Badge kind="conditional">conditional</Badge>}
                    </td>
                    <td>
                      {e.actions.join(', ')}
                      {e.denied_actions && e.denied_actions.length > 0 && (
                        <div class="lost">except {e.denied_actions.join(', ')}</div>
                      )}
                    </td>
                    <td>
                      <How entry={e} />
                    </td>
                    <td>
                      {at ? (
                        <>
                          {e.granted_at && <time dateTime={e.granted_at}>{whenExact(e.granted_at)}</time>}
                          {e.granted_by_event !== undefined && <GrantedByEvent event={e.granted_by_event} />}
                        </>
                      ) : (
                        when(e.granted_at)
                      )}
                    </td>
                  </tr>
                ))}
              </Table>
              {data.pagination && <Pager label="Access" {...data.pagination} page={page} onPage={setPage} />}
            </>
          );
        }}
      </Shown>
    </Panel>
  );
}

/** A principal of a delegation chain, named; null when the id names nobody. */
type Named = Pick<Principal, 'id' | 'name' | 'status'> | null;

/** The principals a delegation runs through: its chain while active, else its two ends. */
const chainOf = (d: Delegation): string[] => d.chain ?? [d.delegator_id, d.delegate_id];

/**
 * A principal's delegations with the principals of their chains named: one read per distinct
 * principal, however many chains it appears in.
 */
async function loadDelegations(
  id: string,
  signal: AbortSignal,
): Promise<{ delegations: PrincipalDelegations; names: Map<string, Named> }> {
  const delegations = await get<PrincipalDelegations>(
    `/v1/principals/${seg(id)}/delegations`,
    undefined,
    signal,
  );
  const ids = new Set([...delegations.given, ...delegations.received].flatMap(chainOf));
  const named = await Promise.all(
    [...ids].map((pid) =>
      get<Principal>(`/v1/principals/${seg(pid)}`, undefined, signal).then(
        (p): [string, Named] => [pid, { id: p.id, name: p.name, status: p.status }],
        (): [string, Named] => [pid, null],
      ),
    ),
  );
  return { delegations, names: new Map(named) };
}

/** A delegation chain, outermost delegator first: each principal named, linked unless it is this page's. */
function Chain(props: { ids: string[]; names: Map<string, Named>; current: string }) {
  return (
    <span class="path chain">
      {props.ids.map((id, i) => {
        const p = props.names.get(id);
        return (
          <span key={id}>
            {i > 0 && <span aria-label="delegates to"> → </span>}
            {id === props.current ? (
              <strong>{p?.name ?? id}</strong>
            ) : (
              <Link to={`/principals/${id}`}>{p?.name ?? id}</Link>
            )}
            {p && p.status !== 'active' && <Badge kind={p.status}>{p.status}</Badge>}
          </span>
        );
      })}
    </span>
  );
}

/** Why an active delegation does not apply: time, or a principal at either end. */
function notApplying(d: Delegation): string {
  if (d.status !== 'active') return d.status;
  if (Date.parse(d.expires_at) <= Date.now()) return 'past its expiry';
  if (d.delegator_status !== 'active') return `the delegator is ${d.delegator_status}`;
  return `the delegate is ${d.delegate_status}`;
}

function DelegationTable(props: {
  rows: Delegation[];
  names: Map<string, Named>;
  current: string;
  empty: string;
}) {
  return (
    <Table
      class="delegations"
      head={heads('Chain', 'Status', 'Actions', 'Resources', 'Expires')}
      rows={props.rows.length}
      empty={props.empty}
    >
      {props.rows.map((d) => (
        <tr key={d.id} data-delegation={d.id}>
          <td>
            <Chain ids={chainOf(d)} names={props.names} current={props.current} />
            {d.reason && <div class="muted">{d.reason}</div>}
          </td>
          <td>
            <Badge kind={d.status}>{d.status}</Badge>
            <div class={d.applies ? 'ok' : 'muted'}>
              {d.applies ? 'applies' : `does not apply: ${notApplying(d)}`}
            </div>
          </td>
          <td>{d.actions.join(', ')}</td>
          <td>
            {d.resources === null ? (
              <span class="muted">every resource</span>
            ) : (
              d.resources.map((r) => (
                <div key={`${r.type}:${r.identifier}`}>
                  <code>
                    {r.type}:{r.identifier}
                  </code>
                </div>
              ))
            )}
          </td>
          <td>{when(d.expires_at)}</td>
        </tr>
      ))}
    </Table>
  );
}

function Delegations(props: { p: Principal }) {
  return (
    <Panel id="delegations" title="Delegations">
      <Gate feature="delegations">
        <DelegationLists p={props.p} />
      </Gate>
    </Panel>
  );
}

function DelegationLists(props: { p: Principal }) {
  const loaded = useLoad((signal) => loadDelegations(props.p.id, signal), [props.p.id]);
  return (
    <Shown loaded={loaded} what="delegations" context="Delegations">
      {({ delegations, names }) => (
        <>
          <h3>Given</h3>
          <p class="muted">Who acts for this principal, and further down the chains that start here.</p>
          <DelegationTable
            rows={delegations.given}
            names={names}
            current={props.p.id}
            empty="It delegates to nobody."
          />
          <h3>Received</h3>
          <p class="muted">For whom this principal acts.</p>
          <DelegationTable
            rows={delegations.received}
            names={names}
            current={props.p.id}
            empty="It acts for nobody."
          />
        </>
      )}
    </Shown>
  );
}

function describeChanges(event: AuditEvent): string {
  if (!event.changes) return '';
  return Object.entries(event.changes)
    .slice(0, 4)
    .map(([k, v]) => `${k}: ${JSON.stringify(v.from ?? null)} → ${JSON.stringify(v.to ?? null)}`)
    .join('; ');
}

function AuditTrail(props: { p: Principal }) {
  return (
    <Panel id="audit" title="Audit trail">
      <Gate feature="audit">
        <AuditEvents p={props.p} />
      </Gate>
    </Panel>
  );
}

function AuditEvents(props: { p: Principal }) {
  const [page, setPage] = useState(1);
  const events = useLoad(
    (signal) => get<List<AuditEvent>>('/v1/audit/events', { target_id: props.p.id, page, limit: 10 }, signal),
    [props.p.id, page],
  );
  return (
    <>
      <Shown loaded={events} what="events" context="Audit trail">
        {(data) => (
          <>
            <Table head={heads('When', 'Event', 'By', 'Changes')} rows={data.data.length} empty="No events.">
              {data.data.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.occurred_at)}</td>
                  <td>
                    <code>{e.type}</code>
                    {e.outcome !== 'success' && <Badge kind="failure">{e.outcome}</Badge>}
                  </td>
                  <td>
                    {e.actor.type} <code>{e.actor.id}</code>
                  </td>
                  <td class="changes">{describeChanges(e)}</td>
                </tr>
              ))}
            </Table>
            <Pager label="Audit" {...data.pagination} page={page} onPage={setPage} />
          </>
        )}
      </Shown>
    </>
  );
}

export function PrincipalPage(props: { id: string }) {
  return (
    <Gate feature="principal">
      <PrincipalPageView {...props} />
    </Gate>
  );
}

function PrincipalPageView(props: { id: string }) {
  const heading = useFocusHeading(props.id);
  const principal = useLoad(
    (signal) => get<Principal>(`/v1/principals/${seg(props.id)}`, undefined, signal),
    [props.id],
  );
  return (
    <>
      <Shown loaded={principal} what="the principal" context="Principal">
        {(p) => (
          <>
            <header class="page-head">
              <h1 ref={heading} tabIndex={-1}>
                {p.name}
              </h1>
              <Badge kind={p.type}>{p.type}</Badge>
              <Badge kind={p.status}>{p.status}</Badge>
              <nav aria-label="On this page" class="toc">
                <a href="#record">Record</a> · <a href="#graph">Graph</a> · <a href="#access">Access</a> ·{' '}
                <a href="#history">Access history</a> · <a href="#delegations">Delegations</a> ·{' '}
                <a href="#audit">Audit trail</a> ·{' '}
                <Link to={`/decisions?principal_id=${p.id}`}>Evaluate a request</Link>
              </nav>
            </header>
            <div class="columns">
              <Record p={p} />
              <Risk p={p} />
            </div>
            <Graph p={p} />
            <Access p={p} />
            <AccessHistory filter={{ principal_id: p.id }} shows="resource" />
            <Delegations p={p} />
            <AuditTrail p={p} />
          </>
        )}
      </Shown>
    </>
  );
}
