import { useMemo, useState } from 'preact/hooks';
import { get, post, seg } from '../api';
import {
  ActionChips,
  Badge,
  Gate,
  heads,
  Link,
  Loading,
  Pager,
  Panel,
  ProblemBox,
  Shown,
  Table,
  useFocusHeading,
  useLoad,
} from '../components/ui';
import { navigate } from '../router';
import { checkPolicyText, WRITABLE } from '../policy-check';
import { mergePatch, type Proposal, type Received } from '../proposal';
import type { AccessChange, List, Policy, Simulation } from '../types';

/** The fields a client writes, as the editor shows them (a null is the same as no value). */
function writable(policy: Policy): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of WRITABLE) if (policy[key] !== undefined && policy[key] !== null) body[key] = policy[key];
  return body;
}

const editable = (policy: Policy): string => JSON.stringify(writable(policy), null, 2);

/**
 * The policy with a proposed merge patch applied. A key the patch adds that a client does not
 * write is kept, so the check below the editor names it rather than dropping it unseen.
 */
const proposed = (policy: Policy, proposal: Proposal): string =>
  JSON.stringify(mergePatch(writable(policy), proposal.patch), null, 2);

/** Says where the editor's text came from when a proposed change filled it in. */
function ProposalNote(props: { policy: Policy; proposal: Proposal }) {
  const { policy, proposal } = props;
  return (
    <div class="notice proposal" role="note">
      <p>
        A proposed change is applied below, not saved: simulate it to see everyone it would affect, or reset
        to the policy as it is.
      </p>
      {proposal.at !== undefined && proposal.at !== policy.version && (
        <p class="warn">
          It was worked out on version {proposal.at}; the policy is now at version {policy.version}. It is
          applied to the current version: read it before simulating.
        </p>
      )}
      <details>
        <summary>The change (JSON merge patch)</summary>
        <pre class="code">{JSON.stringify(proposal.patch, null, 2)}</pre>
      </details>
    </div>
  );
}

function PolicyPicker() {
  const [page, setPage] = useState(1);
  const [filter, setFilter] = useState('');
  const list = useLoad((signal) => get<List<Policy>>('/v1/policies', { page, limit: 50 }, signal), [page]);
  const shown = (list.data?.data ?? []).filter((p) => p.name.toLowerCase().includes(filter.toLowerCase()));
  return (
    <Panel id="policies" title="Choose a policy">
      <label>
        Filter this page by name
        <input value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </label>
      <Shown loaded={list} what="policies" context="Policies">
        {(data) => (
          <>
            <Table
              head={heads('Name', 'Effect', 'Status', 'Actions', 'Resources')}
              rows={shown.length}
              empty={filter ? 'No policy on this page has that in its name.' : 'No policy yet.'}
            >
              {shown.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Link to={`/what-if?policy=${p.id}`}>{p.name}</Link>
                  </td>
                  <td>
                    <Badge kind={p.effect}>{p.effect}</Badge>
                  </td>
                  <td>{p.status}</td>
                  <td>{p.actions.join(', ')}</td>
                  <td>{p.resources.map((r) => `${r.type}:${r.identifier}`).join(', ')}</td>
                </tr>
              ))}
            </Table>
            <Pager label="Policies" {...data.pagination} page={page} onPage={setPage} />
          </>
        )}
      </Shown>
    </Panel>
  );
}

const PRINCIPALS_PER_PAGE = 20;

/** The blast radius, principal by principal: actions gained in green (+), lost in red (−). */
function BlastRadius(props: { changes: AccessChange[] }) {
  const byPrincipal = useMemo(() => {
    const map = new Map<string, AccessChange[]>();
    for (const c of props.changes) map.set(c.principal_id, [...(map.get(c.principal_id) ?? []), c]);
    return [...map.entries()];
  }, [props.changes]);
  const [page, setPage] = useState(1);
  const pages = Math.ceil(byPrincipal.length / PRINCIPALS_PER_PAGE);
  const visible = byPrincipal.slice((page - 1) * PRINCIPALS_PER_PAGE, page * PRINCIPALS_PER_PAGE);
  if (byPrincipal.length === 0) return <p class="muted">Nobody's access would change.</p>;
  return (
    <>
      <ul class="blast" aria-label="Access changes per principal">
        {visible.map(([id, changes]) => {
          const p = changes[0]!.principal;
          return (
            <li key={id} class="blast-principal">
              <h3>
                <Link to={`/principals/${id}`}>{p.name || id}</Link> <Badge kind={p.type}>{p.type}</Badge>
              </h3>
              <table class="grid compact diff">
                <tbody>
                  {changes.map((c) => (
                    <tr key={`${c.resource.type}:${c.resource.identifier}`}>
                      <th scope="row">
                        <code>
                          {c.resource.type}:{c.resource.identifier}
                        </code>
                      </th>
                      <td>
                        <ActionChips gained={c.gained} lost={c.lost} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </li>
          );
        })}
      </ul>
      <Pager
        label="Affected principals"
        page={page}
        pages={pages}
        total={byPrincipal.length}
        onPage={setPage}
      />
    </>
  );
}

function Summary(props: { summary: Simulation['summary'] }) {
  const s = props.summary;
  return (
    <ul class="summary" aria-label="Simulation summary">
      <li>
        <strong>{s.principals_affected.toLocaleString()}</strong> principals affected
      </li>
      <li>
        <strong>{s.changed.toLocaleString()}</strong> of {s.evaluated.toLocaleString()} changed
      </li>
      <li class="gained">
        <strong>{s.newly_allowed.toLocaleString()}</strong> newly allowed
      </li>
      <li class="lost">
        <strong>{s.newly_denied.toLocaleString()}</strong> newly denied
      </li>
    </ul>
  );
}

function Editor(props: { policy: Policy; proposal?: Proposal }) {
  const original = editable(props.policy);
  const [text, setText] = useState(() =>
    props.proposal ? proposed(props.policy, props.proposal) : original,
  );
  const [result, setResult] = useState<{
    simulation?: Simulation;
    error?: unknown;
    busy: boolean;
    what?: string;
  }>({
    busy: false,
  });
  const checked = checkPolicyText(text);
  const simulate = (body: Record<string, unknown>, what: string): void => {
    setResult({ busy: true, what });
    post<Simulation>(`/v1/policies/${seg(props.policy.id)}/simulate`, body).then(
      (simulation) => setResult({ simulation, busy: false, what }),
      (error: unknown) => setResult({ error, busy: false, what }),
    );
  };
  return (
    <div class="columns even">
      <Panel id="editor" title="Proposed policy">
        <p class="muted">
          Version {props.policy.version}, {props.policy.status}. Edit the JSON, then simulate: nothing is
          saved.
        </p>
        {props.proposal && <ProposalNote policy={props.policy} proposal={props.proposal} />}
        <label class="editor-label" for="policy-json">
          Policy JSON
        </label>
        <textarea
          id="policy-json"
          class="code"
          spellcheck={false}
          rows={Math.min(30, Math.max(12, text.split('\n').length + 1))}
          value={text}
          aria-invalid={checked.problems.length > 0}
          aria-describedby="policy-json-check"
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <div id="policy-json-check" aria-live="polite">
          {checked.problems.length === 0 ? (
            <p class="ok">Valid policy JSON{text === original ? ' (unchanged)' : ''}.</p>
          ) : (
            <ul class="invalid">
              {checked.problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          )}
        </div>
        <div class="buttons">
          <button
            type="button"
            disabled={!checked.body || result.busy}
            onClick={() => checked.body && simulate({ policy: checked.body }, 'change')}
          >
            Simulate this change
          </button>
          <button
            type="button"
            class="danger"
            disabled={result.busy}
            onClick={() => simulate({ delete: true }, 'deletion')}
          >
            Simulate deleting it
          </button>
          <button
            type="button"
            class="secondary"
            disabled={text === original}
            onClick={() => setText(original)}
          >
            Reset
          </button>
        </div>
      </Panel>
      <Panel id="blast" title="Blast radius">
        {result.busy && <Loading what="the simulation" />}
        {result.error !== undefined && <ProblemBox error={result.error} context="Simulation" />}
        {!result.busy && !result.simulation && result.error === undefined && (
          <p class="muted">Run a simulation to see who would gain or lose access.</p>
        )}
        {result.simulation && (
          <div data-simulated={result.what}>
            <p>If this policy's {result.what === 'deletion' ? 'deletion' : 'change'} went live:</p>
            <Summary summary={result.simulation.summary} />
            <BlastRadius changes={result.simulation.access_changes ?? []} />
          </div>
        )}
      </Panel>
    </div>
  );
}

export function WhatIf(props: { policyId: string; received?: Received }) {
  return (
    <Gate feature="policies">
      <WhatIfView {...props} />
    </Gate>
  );
}

function WhatIfView(props: { policyId: string; received?: Received }) {
  const received = props.received ?? null;
  const proposal = received && 'proposal' in received ? received.proposal : undefined;
  const heading = useFocusHeading(`what-if:${props.policyId}`);
  const policy = useLoad(
    (signal) =>
      props.policyId
        ? get<Policy>(`/v1/policies/${seg(props.policyId)}`, undefined, signal)
        : Promise.resolve(null),
    [props.policyId],
  );
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>
        Policy what-if{policy.data ? `: ${policy.data.name}` : ''}
      </h1>
      {props.policyId && (
        <p>
          <button type="button" class="secondary" onClick={() => navigate('/what-if')}>
            ← All policies
          </button>
        </p>
      )}
      {policy.error !== undefined && <ProblemBox error={policy.error} context="Policy" />}
      {props.policyId && !policy.data && policy.loading && <Loading what="the policy" />}
      {!props.policyId && <PolicyPicker />}
      {received && 'error' in received && (
        <ProblemBox error={new Error(`${received.error} The policy is shown as it is.`)} context="Proposal" />
      )}
      {policy.data && (
        <Editor
          key={`${policy.data.id}:${policy.data.version}:${proposal ? JSON.stringify(proposal.patch) : ''}`}
          policy={policy.data}
          {...(proposal ? { proposal } : {})}
        />
      )}
    </>
  );
}
