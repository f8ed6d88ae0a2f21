import { useState } from 'preact/hooks';
import { post } from '../api';
import { Badge, Gate, heads, Link, Panel, ProblemBox, Table, useFocusHeading, when } from '../components/ui';
import { PrincipalRef } from '../components/principal-ref';
import { WhyNot } from '../components/why-not';
import type { Decision, TraceCandidate, TraceLink, TraceVerdict } from '../types';

interface Form {
  principal_id: string;
  action: string;
  type: string;
  identifier: string;
  attributes: string;
  context: string;
  on_behalf_of: string;
}

/** Parses an optional JSON object field; an error names the field. */
function objectField(label: string, text: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${label} is not valid JSON.`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${label} must be a JSON object.`);
  return value as Record<string, unknown>;
}

/**
 * `on_behalf_of` as typed: one principal id, or a delegation chain written outermost delegator
 * first, separated by commas, spaces or arrows.
 */
function onBehalfOf(text: string): string | string[] | undefined {
  const ids = text.split(/(?:\s|,|→|->)+/).filter((id) => id !== '');
  if (ids.length === 0) return undefined;
  return ids.length === 1 ? ids[0] : ids;
}

function requestOf(form: Form): Record<string, unknown> {
  const attributes = objectField('Resource attributes', form.attributes);
  const context = objectField('Context', form.context);
  const chain = onBehalfOf(form.on_behalf_of);
  return {
    principal_id: form.principal_id.trim(),
    action: form.action.trim(),
    resource: {
      type: form.type.trim(),
      identifier: form.identifier.trim(),
      ...(attributes ? { attributes } : {}),
    },
    ...(context ? { context } : {}),
    ...(chain ? { on_behalf_of: chain } : {}),
    explain: true,
  };
}

function Candidate(props: { c: TraceCandidate }) {
  const { c } = props;
  return (
    <tr class={c.applied ? 'applied' : 'not-applied'}>
      <td>
        <Link to={`/what-if?policy=${c.policy_id}`}>{c.name}</Link>
        <div class="muted">
          v{c.policy_version} · <Badge kind={c.effect}>{c.effect}</Badge>
        </div>
      </td>
      <td>
        {c.subject.matched ? (
          <>
            {c.subject.via === 'principal'
              ? 'named directly'
              : c.subject.via === 'match'
                ? 'matched by attributes'
                : 'through groups'}
            {c.subject.path && c.subject.path.length > 1 && (
              <div class="path">{c.subject.path.map((s) => s.name || s.id).join(' → ')}</div>
            )}
          </>
        ) : (
          <span class="muted">not a subject</span>
        )}
      </td>
      <td>
        {c.conditions.length === 0 ? (
          <span class="muted">none</span>
        ) : (
          <ul class="conditions">
            {c.conditions.map((k) => (
              <li key={k.path}>
                <code>{k.path}</code> <Badge kind={`cond-${k.result}`}>{k.result}</Badge>
                {k.missing && k.missing.length > 0 && (
                  <span class="muted"> missing {k.missing.join(', ')}</span>
                )}
              </li>
            ))}
          </ul>
        )}
      </td>
      <td>
        <strong>{c.applied ? 'applies' : 'does not apply'}</strong>
        <div class="muted">{c.why}</div>
      </td>
    </tr>
  );
}

/** One link of the delegation chain: whether a delegation covers the request, and which. */
function ChainLink(props: { link: TraceLink }) {
  const { link } = props;
  return (
    <tr class={link.covered ? 'applied' : 'not-applied'}>
      <td>
        <PrincipalRef reference={link.delegator_id} />
        <span aria-label="delegates to"> → </span>
        <PrincipalRef reference={link.delegate_id} />
      </td>
      <td>
        {link.delegation_id ? (
          <>
            <code>{link.delegation_id}</code>
            {link.expires_at && <div class="muted">until {when(link.expires_at)}</div>}
          </>
        ) : (
          <span class="muted">none</span>
        )}
      </td>
      <td>
        <strong>{link.covered ? 'covered' : 'not covered'}</strong>
        <div class="muted">{link.why}</div>
      </td>
    </tr>
  );
}

/** One principal's own decision on the request, the caller first. */
function Verdict(props: { verdict: TraceVerdict }) {
  const { verdict } = props;
  return (
    <tr>
      <td>
        <PrincipalRef reference={verdict.principal_id} />
      </td>
      <td>
        <Badge kind={verdict.allowed ? 'allow' : 'deny'}>{verdict.allowed ? 'allowed' : 'denied'}</Badge>
      </td>
      <td>
        {verdict.reasons.map((r, i) => (
          <div key={i}>
            <code>{r.code}</code>
            {r.policy_id && (
              <>
                {' '}
                <Link to={`/what-if?policy=${r.policy_id}`}>{r.policy_id}</Link>
              </>
            )}
          </div>
        ))}
      </td>
    </tr>
  );
}

export function Decisions(props: { initial: URLSearchParams }) {
  const heading = useFocusHeading('decisions');
  const [form, setForm] = useState<Form>({
    principal_id: props.initial.get('principal_id') ?? '',
    action: props.initial.get('action') ?? '',
    type: props.initial.get('type') ?? '',
    identifier: props.initial.get('identifier') ?? '',
    attributes: '',
    context: '',
    on_behalf_of: '',
  });
  const [state, setState] = useState<{
    decision?: Decision;
    error?: unknown;
    busy: boolean;
    /** The request last sent, to ask again after a remedy was applied. */
    request?: Record<string, unknown>;
    /** What was changed before this evaluation, said beside its answer. */
    notice?: string;
  }>({
    busy: false,
  });
  const evaluate = (request: Record<string, unknown>, notice?: string): void => {
    setState({ busy: true, request, ...(notice ? { notice } : {}) });
    post<Decision>('/v1/decisions/evaluate', request).then(
      (decision) => setState({ decision, busy: false, request, ...(notice ? { notice } : {}) }),
      (error: unknown) => setState({ error, busy: false, request }),
    );
  };
  const set = (patch: Partial<Form>): void => setForm((f) => ({ ...f, ...patch }));
  const field = (key: keyof Form, label: string, placeholder: string, required = true) => (
    <label>
      {label}
      <input
        name={key}
        required={required}
        value={form[key]}
        placeholder={placeholder}
        onInput={(e) => set({ [key]: e.currentTarget.value })}
      />
    </label>
  );
  const d = state.decision;
  return (
    <Gate feature="decisions">
      <h1 ref={heading} tabIndex={-1}>
        Decisions explorer
      </h1>
      <form
        class="panel decision-form"
        aria-label="Decision request"
        onSubmit={(e) => {
          e.preventDefault();
          let body: Record<string, unknown>;
          try {
            body = requestOf(form);
          } catch (error) {
            setState({ error, busy: false });
            return;
          }
          evaluate(body);
        }}
      >
        <div class="row">
          {field('principal_id', 'Principal id', 'prn_…')}
          {field('action', 'Action', 'read')}
          {field('type', 'Resource type', 'database')}
          {field('identifier', 'Resource identifier', 'payments-prod-1')}
        </div>
        <div class="row">
          <label class="grow">
            Resource attributes (JSON, optional)
            <textarea
              class="code"
              rows={3}
              value={form.attributes}
              onInput={(e) => set({ attributes: e.currentTarget.value })}
            />
          </label>
          <label class="grow">
            Context (JSON, optional)
            <textarea
              class="code"
              rows={3}
              value={form.context}
              placeholder='{ "ip": "10.1.2.3" }'
              onInput={(e) => set({ context: e.currentTarget.value })}
            />
          </label>
          {field('on_behalf_of', 'On behalf of (optional)', 'prn_…, or a chain: outermost first', false)}
        </div>
        <button type="submit" disabled={state.busy}>
          {state.busy ? 'Evaluating…' : 'Evaluate with explanation'}
        </button>
        <p class="muted">Every evaluation is recorded in the decision log, as for any client.</p>
      </form>
      {state.error !== undefined && <ProblemBox error={state.error} context="Evaluation" />}
      {state.notice && (
        <p class="notice" role="status">
          {state.notice} The request was evaluated again.
        </p>
      )}
      {d && (
        <Panel id="decision" title="Decision">
          <p class={`verdict ${d.allowed ? 'allow' : 'deny'}`} role="status">
            <strong>{d.decision}</strong> — <code>{d.principal_id}</code> {d.action}{' '}
            <code>
              {d.resource.type}:{d.resource.identifier}
            </code>
            {d.on_behalf_of && d.on_behalf_of.length > 0 && (
              <>
                {' '}
                on behalf of{' '}
                {d.on_behalf_of.map((id, i) => (
                  <span key={id}>
                    {i > 0 && ' → '}
                    <code>{id}</code>
                  </span>
                ))}
              </>
            )}
          </p>
          <ul class="reasons">
            {d.reasons.map((r, i) => (
              <li key={i}>
                <code>{r.code}</code>
                {r.policy_id && (
                  <>
                    {' '}
                    <Link to={`/what-if?policy=${r.policy_id}`}>{r.policy_id}</Link>
                  </>
                )}
                {r.principal_id && (
                  <>
                    {' '}
                    about <PrincipalRef reference={r.principal_id} />
                  </>
                )}
                {r.message && <span class="muted"> {r.message}</span>}
              </li>
            ))}
          </ul>
          <p class="muted">
            Recorded as <code>{d.id}</code>.
          </p>
        </Panel>
      )}
      {d && !d.allowed && (d.near_misses || d.remedies) && (
        <WhyNot
          key={d.id}
          decision={d}
          onApplied={(message) => state.request && evaluate(state.request, message)}
        />
      )}
      {d?.trace && (
        <Panel id="trace" title="Trace">
          {d.trace.principals.map((p) => (
            <p key={p.id}>
              <PrincipalRef reference={p.id} />{' '}
              {p.found ? (
                <>
                  {p.type} · {p.status}
                  {p.groups && p.groups.length > 0 && ` · in ${p.groups.length} group(s)`}
                </>
              ) : (
                'not found'
              )}
            </p>
          ))}
          <Table
            class="trace"
            head={heads('Candidate policy', 'Subject', 'Conditions', 'Outcome')}
            rows={d.trace.candidates.length}
            empty="No policy names this resource and action."
          >
            {d.trace.candidates.map((c) => (
              <Candidate key={`${c.principal_id}:${c.policy_id}`} c={c} />
            ))}
          </Table>
          {d.trace.links && (
            <>
              <h3>Delegation chain</h3>
              <Table
                class="links"
                head={heads('Link', 'Delegation', 'Outcome')}
                rows={d.trace.links.length}
                empty="No link."
              >
                {d.trace.links.map((l) => (
                  <ChainLink key={`${l.delegator_id}>${l.delegate_id}`} link={l} />
                ))}
              </Table>
            </>
          )}
          {d.trace.verdicts && (
            <>
              <h3>Each principal’s own decision</h3>
              <Table
                class="verdicts"
                head={heads('Principal', 'Decision', 'Reasons')}
                rows={d.trace.verdicts.length}
                empty="No principal."
              >
                {d.trace.verdicts.map((v) => (
                  <Verdict key={v.principal_id} verdict={v} />
                ))}
              </Table>
            </>
          )}
        </Panel>
      )}
    </Gate>
  );
}
