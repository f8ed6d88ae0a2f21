import { useState } from 'preact/hooks';
import { get, post, seg } from '../api';
import {
  Badge,
  Gate,
  Link,
  Loading,
  Pager,
  ProblemBox,
  Table,
  useFocusHeading,
  useLoad,
  when,
} from '../components/ui';
import { navigate } from '../router';
import type { Report } from '../types';

/** A delegation an identity holds, as the reports list it (`acts_for`). */
interface Held {
  delegation_id: string;
  delegator_id: string;
  delegator_name: string;
  delegator_status: string;
}

type Cell = string | number | boolean | null;
/** A report row; only `acts_for` holds a list. */
type Row = Record<string, Cell | Held[]>;

/** The id of the principal a row is about. */
const idOf = (row: Row): string => {
  const id = row['id'];
  return typeof id === 'string' ? id : '';
};

interface Finding {
  kind: 'orphaned' | 'dormant';
  title: string;
  explain: string;
  columns: [key: string, label: string][];
}

const FINDINGS: Record<Finding['kind'], Omit<Finding, 'kind'>> = {
  orphaned: {
    title: 'Orphaned identities',
    explain:
      'Service accounts, API keys and AI agents without a living owner: no owner recorded, an owner that names nobody, or one who was deprovisioned or deleted. Also AI agents still acting for someone who is no longer active, or holding delegations once their owner is gone.',
    columns: [
      ['name', 'Name'],
      ['type', 'Type'],
      ['status', 'Status'],
      ['owner', 'Owner recorded'],
      ['owner_state', 'Owner state'],
      ['acts_for', 'Acts for'],
      ['risk_score', 'Risk'],
      ['created_at', 'Created'],
    ],
  },
  dormant: {
    title: 'Dormant identities',
    explain:
      'Active and suspended principals not seen for the chosen number of days (never logged in: since they were created).',
    columns: [
      ['name', 'Name'],
      ['type', 'Type'],
      ['status', 'Status'],
      ['email', 'Email'],
      ['last_login', 'Last login'],
      ['days_inactive', 'Days inactive'],
      ['risk_score', 'Risk'],
    ],
  },
};

const POLL_MS = 500;
const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new DOMException('aborted', 'AbortError'));
    });
  });

/**
 * Runs the report behind a finding (docs/api.md §6.2) and reads its rows: the same list an auditor
 * downloads, so the console and the report never disagree.
 */
async function runReport(
  type: string,
  parameters: Record<string, unknown>,
  signal: AbortSignal,
): Promise<{ report: Report; rows: Row[] }> {
  let report = await post<Report>('/v1/audit/reports', { type, format: 'json', parameters });
  while (report.status === 'pending' || report.status === 'running') {
    await sleep(POLL_MS, signal);
    report = await get<Report>(`/v1/audit/reports/${seg(report.id)}`, undefined, signal);
  }
  if (report.status === 'failed') throw new Error(`The report failed: ${report.error ?? 'no reason given'}.`);
  const content = await get<{ data: Row[]; row_count: number }>(
    `/v1/audit/reports/${seg(report.id)}/content`,
    undefined,
    signal,
  );
  return { report, rows: content.data };
}

const PER_PAGE = 50;

/** Whom an identity acts for, each delegator linked with its status when it is not active. */
function ActsFor(props: { held: Held[]; orphaned: boolean }) {
  if (props.held.length === 0) return <span class="muted">—</span>;
  return (
    <>
      {props.held.map((h) => (
        <div key={h.delegation_id}>
          <Link to={`/principals/${h.delegator_id}`}>{h.delegator_name}</Link>
          {h.delegator_status !== 'active' && <Badge kind={h.delegator_status}>{h.delegator_status}</Badge>}
        </div>
      ))}
      {props.orphaned && <span class="warn">orphaned delegation</span>}
    </>
  );
}

function cell(key: string, row: Row) {
  const value = row[key];
  if (Array.isArray(value)) return <ActsFor held={value} orphaned={row['delegation_orphaned'] === true} />;
  if (key === 'name') return <Link to={`/principals/${idOf(row)}`}>{String(value ?? idOf(row))}</Link>;
  if (key === 'type' || key === 'status' || key === 'owner_state') {
    return value ? <Badge kind={String(value)}>{String(value)}</Badge> : <span class="muted">—</span>;
  }
  if (key === 'owner' && !value) return <span class="warn">none</span>;
  if ((key === 'last_login' || key === 'created_at') && typeof value === 'string') return when(value);
  if (key === 'last_login') return 'never';
  return value === null || value === undefined ? '' : String(value);
}

export function Findings(props: { kind: Finding['kind']; days: number }) {
  return (
    <Gate feature="findings">
      <FindingsView {...props} />
    </Gate>
  );
}

function FindingsView(props: { kind: Finding['kind']; days: number }) {
  const finding = FINDINGS[props.kind];
  const heading = useFocusHeading(`${props.kind}:${props.days}`);
  const [run, setRun] = useState(0);
  const [page, setPage] = useState(1);
  const [days, setDays] = useState(props.days);
  const result = useLoad(
    (signal) =>
      runReport(
        props.kind === 'orphaned' ? 'orphaned_principals' : 'dormant_principals',
        props.kind === 'dormant' ? { days: props.days } : {},
        signal,
      ),
    [props.kind, props.days, run],
  );
  const rows = result.data?.rows ?? [];
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>
        {finding.title}
        {props.kind === 'dormant' ? `: not seen for ${props.days} days` : ''}
      </h1>
      <nav class="tabs" aria-label="Findings">
        <Link to="/findings/orphaned" current={props.kind === 'orphaned'}>
          Orphaned
        </Link>
        <Link to={`/findings/dormant?days=${props.days}`} current={props.kind === 'dormant'}>
          Dormant
        </Link>
      </nav>
      <p class="muted">{finding.explain}</p>
      <div class="inline-form">
        {props.kind === 'dormant' && (
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              setPage(1);
              navigate(`/findings/dormant?days=${days}`);
            }}
          >
            <label>
              Days
              <input
                type="number"
                class="narrow"
                min={1}
                max={3650}
                value={days}
                onInput={(e) => setDays(Number(e.currentTarget.value) || 90)}
              />
            </label>
            <button type="submit" class="secondary">
              Apply
            </button>
          </form>
        )}
        <button
          type="button"
          class="secondary"
          disabled={result.loading}
          onClick={() => {
            setPage(1);
            setRun((r) => r + 1);
          }}
        >
          Run again
        </button>
      </div>
      {result.error !== undefined && <ProblemBox error={result.error} context="Report" />}
      {result.loading && <Loading what="the report (it runs as a background job)" />}
      {result.data && !result.loading && (
        <section class="panel" aria-labelledby="finding-rows">
          <header class="panel-head">
            <h2 id="finding-rows">
              {rows.length.toLocaleString()} {rows.length === 1 ? 'principal' : 'principals'}
            </h2>
            <span class="muted">
              Report <code>{result.data.report.id}</code> as of {when(result.data.report.requested_at)}
            </span>
          </header>
          <Table
            head={finding.columns.map(([key, label]) => (
              <th key={key}>{label}</th>
            ))}
            rows={rows.length}
            empty="None found."
          >
            {rows.slice((page - 1) * PER_PAGE, page * PER_PAGE).map((row) => (
              <tr key={idOf(row)}>
                {finding.columns.map(([key]) => (
                  <td key={key}>{cell(key, row)}</td>
                ))}
              </tr>
            ))}
          </Table>
          <Pager
            label="Findings"
            page={page}
            pages={Math.ceil(rows.length / PER_PAGE)}
            total={rows.length}
            onPage={setPage}
          />
        </section>
      )}
    </>
  );
}
