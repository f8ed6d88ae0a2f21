import { useEffect, useState } from 'preact/hooks';
import { post } from '../api';
import { Badge, Gate, Link, Pager, Shown, Table, useFocusHeading, useLoad, when } from '../components/ui';
import { navigate, useLocation } from '../router';
import {
  ATTRIBUTE_OPS,
  EMPTY,
  readSearch,
  SORTS,
  STATUSES,
  toQuery,
  TYPES,
  type AttributeOp,
  type AttributeRow,
  type Ran,
  type SearchForm,
  type SortField,
} from '../search-form';
import type { List, PrincipalSummary } from '../types';

/** The search last run, so that coming back to the page from elsewhere shows it again. */
let remembered: Ran | null = null;

/** How the form names types and statuses: as people say them, not as the API spells them. */
const LABELS: Record<string, string> = {
  USER: 'User',
  SERVICE_ACCOUNT: 'Service account',
  AI_AGENT: 'AI agent',
  API_KEY: 'API key',
  active: 'Active',
  suspended: 'Suspended',
  deprovisioned: 'Deprovisioned',
  deleted: 'Deleted',
};

function Checkboxes(props: {
  legend: string;
  options: readonly string[];
  chosen: string[];
  onChange: (chosen: string[]) => void;
}) {
  return (
    <fieldset class="checks">
      <legend>{props.legend}</legend>
      {props.options.map((o) => (
        <label key={o}>
          <input
            type="checkbox"
            checked={props.chosen.includes(o)}
            onChange={(e) =>
              props.onChange(
                e.currentTarget.checked ? [...props.chosen, o] : props.chosen.filter((c) => c !== o),
              )
            }
          />
          {LABELS[o] ?? o}
        </label>
      ))}
    </fieldset>
  );
}

function AttributeRows(props: { rows: AttributeRow[]; onChange: (rows: AttributeRow[]) => void }) {
  const set = (i: number, patch: Partial<AttributeRow>): void =>
    props.onChange(props.rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset class="attributes">
      <legend>Attributes</legend>
      {props.rows.map((row, i) => (
        <div class="attribute-row" key={i}>
          <input
            aria-label={`Attribute ${i + 1} key`}
            placeholder="key, e.g. team"
            value={row.key}
            onInput={(e) => set(i, { key: e.currentTarget.value })}
          />
          <select
            aria-label={`Attribute ${i + 1} test`}
            value={row.op}
            onChange={(e) => set(i, { op: e.currentTarget.value as AttributeOp })}
          >
            {Object.entries(ATTRIBUTE_OPS).map(([op, label]) => (
              <option key={op} value={op}>
                {label}
              </option>
            ))}
          </select>
          {row.op !== 'exists' && row.op !== 'missing' && (
            <input
              aria-label={`Attribute ${i + 1} value`}
              placeholder="value"
              value={row.value}
              onInput={(e) => set(i, { value: e.currentTarget.value })}
            />
          )}
          <button
            type="button"
            class="secondary"
            aria-label={`Remove attribute condition ${i + 1}`}
            onClick={() => props.onChange(props.rows.filter((_, j) => j !== i))}
          >
            ✕
          </button>
        </div>
      ))}
      <button
        type="button"
        class="secondary"
        onClick={() => props.onChange([...props.rows, { key: '', op: 'eq', value: '' }])}
      >
        + Attribute condition
      </button>
    </fieldset>
  );
}

function Results(props: {
  form: SearchForm;
  page: number;
  onPage: (page: number) => void;
  onSort: (field: SortField) => void;
}) {
  const { form, page } = props;
  const body = {
    query: toQuery(form),
    sort: { field: form.sort, order: form.order },
    page,
    limit: form.limit,
  };
  const results = useLoad(
    () => post<List<PrincipalSummary>>('/v1/principals/search', body),
    [JSON.stringify(body)],
  );
  const sortable = (field: SortField, label: string) => (
    <th aria-sort={form.sort === field ? (form.order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" class="th-sort" onClick={() => props.onSort(field)}>
        {label}
        <span aria-hidden="true">{form.sort === field ? (form.order === 'asc' ? ' ▲' : ' ▼') : ''}</span>
      </button>
    </th>
  );
  return (
    <section aria-labelledby="results-title" class="panel">
      <header class="panel-head">
        <h2 id="results-title">Results</h2>
        <details class="query-sent">
          <summary>Query sent</summary>
          <pre>{JSON.stringify(body, null, 2)}</pre>
        </details>
      </header>
      <Shown loaded={results} what="principals" context="Search">
        {(data) => (
          <>
            <Table
              head={
                <>
                  {sortable('name', 'Name')}
                  <th>Type</th>
                  <th>Status</th>
                  <th>Email</th>
                  {sortable('risk_score', 'Risk')}
                  {sortable('last_login', 'Last login')}
                  {sortable('created_at', 'Created')}
                </>
              }
              rows={data.data.length}
              empty="No principal matches."
              busy={results.loading}
            >
              {data.data.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Link to={`/principals/${p.id}`}>{p.name}</Link>
                  </td>
                  <td>
                    <Badge kind={p.type}>{p.type}</Badge>
                  </td>
                  <td>
                    <Badge kind={p.status}>{p.status}</Badge>
                  </td>
                  <td>{p.email ?? ''}</td>
                  <td class="num">{p.risk_score ?? ''}</td>
                  <td>{when(p.last_login)}</td>
                  <td>{when(p.created_at)}</td>
                </tr>
              ))}
            </Table>
            <Pager label="Results" {...data.pagination} page={page} onPage={props.onPage} />
          </>
        )}
      </Shown>
    </section>
  );
}

export function Search() {
  const location = useLocation();
  const heading = useFocusHeading('search');
  const ran = readSearch(location.query) ?? remembered ?? { form: EMPTY, page: 1 };
  const [draft, setDraft] = useState<SearchForm>(ran.form);
  const shown = JSON.stringify(ran.form);
  // Back and forward load another search: the form follows the address.
  useEffect(() => setDraft(ran.form), [shown]);
  const run = (form: SearchForm, page: number): void => {
    remembered = { form, page };
    navigate(`/search?q=${encodeURIComponent(JSON.stringify({ form, page }))}`);
  };
  const set = (patch: Partial<SearchForm>): void => setDraft((d) => ({ ...d, ...patch }));
  return (
    <Gate feature="search">
      <h1 ref={heading} tabIndex={-1}>
        Search principals
      </h1>
      <form
        class="panel search-form"
        role="search"
        aria-label="Principal search"
        onSubmit={(e) => {
          e.preventDefault();
          run(draft, 1);
        }}
      >
        <div class="row">
          <label>
            Name contains
            <input name="name" value={draft.name} onInput={(e) => set({ name: e.currentTarget.value })} />
          </label>
          <label>
            Last login
            <select
              name="login"
              value={draft.login}
              onChange={(e) => set({ login: e.currentTarget.value as SearchForm['login'] })}
            >
              <option value="any">any time</option>
              <option value="before">before</option>
              <option value="after">on or after</option>
              <option value="never">never</option>
            </select>
          </label>
          {(draft.login === 'before' || draft.login === 'after') && (
            <label>
              Date (UTC)
              <input
                type="date"
                name="login_date"
                required
                value={draft.loginDate}
                onInput={(e) => set({ loginDate: e.currentTarget.value })}
              />
            </label>
          )}
          <label>
            Risk from
            <input
              type="number"
              class="narrow"
              min={0}
              max={100}
              name="risk_min"
              value={draft.riskMin}
              onInput={(e) => set({ riskMin: e.currentTarget.value })}
            />
          </label>
          <label>
            to
            <input
              type="number"
              class="narrow"
              min={0}
              max={100}
              name="risk_max"
              value={draft.riskMax}
              onInput={(e) => set({ riskMax: e.currentTarget.value })}
            />
          </label>
        </div>
        <div class="row">
          <Checkboxes
            legend="Type"
            options={TYPES}
            chosen={draft.types}
            onChange={(types) => set({ types })}
          />
          <Checkboxes
            legend="Status (none: all but deleted)"
            options={STATUSES}
            chosen={draft.statuses}
            onChange={(statuses) => set({ statuses })}
          />
        </div>
        <AttributeRows rows={draft.attributes} onChange={(attributes) => set({ attributes })} />
        <div class="row">
          <label>
            Sort by
            <select
              name="sort"
              value={draft.sort}
              onChange={(e) => set({ sort: e.currentTarget.value as SortField })}
            >
              {SORTS.map(([f, label]) => (
                <option key={f} value={f}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Order
            <select
              name="order"
              value={draft.order}
              onChange={(e) => set({ order: e.currentTarget.value as 'asc' | 'desc' })}
            >
              <option value="desc">descending</option>
              <option value="asc">ascending</option>
            </select>
          </label>
          <label>
            Per page
            <select
              name="limit"
              value={draft.limit}
              onChange={(e) => set({ limit: Number(e.currentTarget.value) })}
            >
              {[25, 50, 100].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
          <div class="buttons">
            <button type="submit">Search</button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setDraft(EMPTY);
                run(EMPTY, 1);
              }}
            >
              Clear
            </button>
          </div>
        </div>
      </form>
      <Results
        form={ran.form}
        page={ran.page}
        onPage={(page) => run(ran.form, page)}
        onSort={(field) => {
          // A new column starts where people read it from: names A to Z, times and scores highest first.
          const order =
            ran.form.sort === field
              ? ran.form.order === 'desc'
                ? 'asc'
                : 'desc'
              : field === 'name'
                ? 'asc'
                : 'desc';
          const form: SearchForm = { ...ran.form, sort: field, order };
          setDraft((d) => ({ ...d, sort: field, order }));
          run(form, 1);
        }}
      />
    </Gate>
  );
}
