import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { call, seg } from '../api';
import { navigate } from '../router';
import { missingScope } from '../scopes';
import { proposalTarget } from '../proposal';
import { useSession } from '../session';
import type { Decision } from '../types';
import { Badge, heads, Link, Panel, ProblemBox, Table } from './ui';
import { PrincipalRef } from './principal-ref';

type NearMiss = NonNullable<Decision['near_misses']>[number];
type Remedy = NonNullable<Decision['remedies']>[number];

/** What stopped a near miss, in the words an analyst would use. */
const STOPPED: Record<NearMiss['failed']['kind'], string> = {
  window: 'Outside its time window',
  not_subject: 'Does not select this principal',
  condition: 'A condition does not hold',
  denied_by: 'Overridden by a deny',
  delegation: 'No delegation covers the request',
};

const KIND: Record<Remedy['kind'], string> = {
  add_to_group: 'Add to a group',
  add_to_policy: 'Add to the policy',
  extend_window: 'Extend the window',
  delegate: 'Delegate',
  none: 'Nothing to change',
};

const counted = (n: number, one: string, many: string): string =>
  `${n.toLocaleString()} other ${n === 1 ? one : many}`;

function NearMissRow(props: { miss: NearMiss; principalId: string }) {
  const { miss } = props;
  const { failed } = miss;
  return (
    <tr data-kind={failed.kind}>
      <td>
        <Link to={`/what-if?policy=${encodeURIComponent(miss.policy_id)}`}>{miss.policy_name}</Link>
        {miss.principal_id !== props.principalId && (
          <div class="muted">
            for <PrincipalRef reference={miss.principal_id} />
          </div>
        )}
      </td>
      <td>
        <strong>{STOPPED[failed.kind]}</strong>
        <div>{failed.detail.message}</div>
        {failed.kind === 'denied_by' && (
          <div class="muted">
            {failed.detail.denies.map((d, i) => (
              <span key={d.policy_id}>
                {i > 0 && ', '}
                <Link to={`/what-if?policy=${encodeURIComponent(d.policy_id)}`}>{d.policy_name}</Link>
              </span>
            ))}
          </div>
        )}
      </td>
    </tr>
  );
}

/** The remedy's target, linked where the console has a page for it. */
function Target(props: { remedy: Remedy }) {
  const { remedy } = props;
  switch (remedy.kind) {
    case 'add_to_group':
      return (
        <>
          group <strong>{remedy.target.name}</strong> <code>{remedy.target.id}</code>
        </>
      );
    case 'delegate':
      return (
        <>
          <PrincipalRef reference={remedy.target.delegator_id} />
          <span aria-label="delegates to"> → </span>
          <PrincipalRef reference={remedy.target.delegate_id} />
        </>
      );
    default:
      return (
        <>
          {remedy.kind === 'none' ? 'deny ' : 'policy '}
          <Link to={`/what-if?policy=${encodeURIComponent(remedy.target.id)}`}>
            {remedy.target.name}
          </Link>{' '}
          <span class="muted">v{remedy.target.version}</span>
        </>
      );
  }
}

/**
 * Joining a group is a real write, so it is offered only to a client that may make it, and only
 * after the analyst confirms the exact call; the decision is then asked again to show its effect.
 */
function AddToGroup(props: {
  remedy: Extract<Remedy, { kind: 'add_to_group' }>;
  describedBy: string;
  onApplied: (message: string) => void;
}) {
  const { remedy } = props;
  const session = useSession();
  const [state, setState] = useState<{ confirming: boolean; busy: boolean; error?: unknown }>({
    confirming: false,
    busy: false,
  });
  const confirmButton = useRef<HTMLButtonElement>(null);
  const applyButton = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  // Focus follows the question: onto its answer when asked, back to Apply when it is cancelled,
  // as soon as the buttons are in the page (a button removed under the focus leaves it nowhere).
  useLayoutEffect(() => {
    if (state.confirming) {
      asked.current = true;
      confirmButton.current?.focus();
    } else if (asked.current) applyButton.current?.focus();
  }, [state.confirming]);
  const path = `/v1/groups/${seg(remedy.target.id)}/members/${seg(remedy.change.member_id)}`;
  const reason = session ? missingScope(session.scopes, 'membership') : 'Sign in first.';
  return (
    <>
      <pre class="api-call">
        <code>PUT {path}</code>
      </pre>
      {reason ? (
        <p class="muted">{reason}</p>
      ) : state.confirming ? (
        <div class="confirm" role="group" aria-label="Confirm adding to the group">
          <p>
            Add <code>{remedy.change.member_id}</code> to <strong>{remedy.target.name}</strong> now? This
            changes the group for every policy that names it, and is recorded in the audit trail.
          </p>
          <div class="buttons">
            <button
              type="button"
              class="danger"
              disabled={state.busy}
              ref={confirmButton}
              onClick={() => {
                setState({ confirming: true, busy: true });
                call('PUT', path).then(
                  () => {
                    setState({ confirming: false, busy: false });
                    props.onApplied(`Added ${remedy.change.member_id} to ${remedy.target.name}.`);
                  },
                  (error: unknown) => setState({ confirming: true, busy: false, error }),
                );
              }}
            >
              {state.busy ? 'Adding…' : 'Add to the group'}
            </button>
            <button
              type="button"
              class="secondary"
              disabled={state.busy}
              onClick={() => setState({ confirming: false, busy: false })}
            >
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <div class="buttons">
          <button
            type="button"
            ref={applyButton}
            aria-describedby={props.describedBy}
            onClick={() => setState({ confirming: true, busy: false })}
          >
            Apply…
          </button>
        </div>
      )}
      {state.error !== undefined && <ProblemBox error={state.error} context="Adding to the group" />}
    </>
  );
}

function RemedyItem(props: { remedy: Remedy; index: number; onApplied: (message: string) => void }) {
  const { remedy } = props;
  const session = useSession();
  const messageId = `remedy-${props.index}-message`;
  const blast = remedy.blast_radius;
  return (
    <li class="remedy" data-kind={remedy.kind}>
      <p class="remedy-head">
        <Badge kind={`remedy-${remedy.kind}`}>{KIND[remedy.kind]}</Badge> <Target remedy={remedy} />
      </p>
      <p id={messageId}>{remedy.message}</p>
      {remedy.kind !== 'none' && remedy.also && remedy.also.length > 0 && (
        <div class="remedy-also">
          <p>No one change lets the request through: only together with</p>
          <ul>
            {remedy.also.map((step, i) => (
              <li key={i} data-kind={step.kind}>
                <Badge kind={`remedy-${step.kind}`}>{KIND[step.kind]}</Badge> {step.message}
                {step.kind === 'delegate' && (
                  <pre class="api-call">
                    <code>
                      POST /v1/delegations{'\n'}
                      {JSON.stringify(step.change, null, 2)}
                    </code>
                  </pre>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
      {remedy.kind !== 'none' && (
        <p class="muted blast-radius">
          Blast radius: also grants {counted(blast.principals, 'principal', 'principals')},{' '}
          {counted(blast.resources, 'resource', 'resources')}.
        </p>
      )}
      {(remedy.kind === 'add_to_policy' || remedy.kind === 'extend_window') &&
        (() => {
          const reason = session ? missingScope(session.scopes, 'policies') : 'Sign in first.';
          // The steps that change the same policy go into the one merge patch the what-if tries.
          const patch = Object.assign(
            {},
            remedy.change,
            ...(remedy.also ?? [])
              .filter(
                (step) =>
                  (step.kind === 'add_to_policy' || step.kind === 'extend_window') &&
                  step.target.id === remedy.target.id,
              )
              .map((step) => step.change),
          ) as typeof remedy.change;
          const { to, state } = proposalTarget(remedy.target.id, { patch, at: remedy.target.version });
          return (
            <div class="buttons">
              <button
                type="button"
                class="secondary"
                disabled={reason !== null}
                title={reason ?? undefined}
                aria-describedby={messageId}
                onClick={() => navigate(to, state ? { state } : {})}
              >
                Try in what-if
              </button>
            </div>
          );
        })()}
      {remedy.kind === 'add_to_group' && (
        <AddToGroup remedy={remedy} describedBy={messageId} onApplied={props.onApplied} />
      )}
      {remedy.kind === 'delegate' && (
        <pre class="api-call">
          <code>
            POST /v1/delegations{'\n'}
            {JSON.stringify(remedy.change, null, 2)}
          </code>
        </pre>
      )}
      {remedy.kind === 'none' && (
        <p class="muted">
          Nothing is proposed: only removing or narrowing the deny{' '}
          <Link to={`/what-if?policy=${encodeURIComponent(remedy.target.id)}`}>{remedy.target.name}</Link>{' '}
          would lift it, and the console never weakens a deny for you.
        </p>
      )}
    </li>
  );
}

/**
 * Why a denied request was denied and what would let it through: the policies that came close,
 * each with what stopped it, and the API's remedies in its order (fewest other grants first).
 */
export function WhyNot(props: { decision: Decision; onApplied: (message: string) => void }) {
  const { decision } = props;
  const misses = decision.near_misses ?? [];
  const remedies = decision.remedies ?? [];
  return (
    <Panel id="why-not" title="Why not?">
      <h3>Near misses</h3>
      <Table
        class="near-misses"
        head={heads('Policy', 'What stopped it')}
        rows={misses.length}
        empty="No allow policy names this resource and action for this principal."
      >
        {misses.map((m) => (
          <NearMissRow
            key={`${m.principal_id}:${m.policy_id}`}
            miss={m}
            principalId={decision.principal_id}
          />
        ))}
      </Table>
      <h3>Remedies</h3>
      {remedies.length === 0 ? (
        <p class="muted">No single change lets this request through.</p>
      ) : (
        <ol class="remedies" aria-label="Remedies, fewest other grants first">
          {remedies.map((r, i) => (
            <RemedyItem key={i} remedy={r} index={i} onApplied={props.onApplied} />
          ))}
        </ol>
      )}
    </Panel>
  );
}
