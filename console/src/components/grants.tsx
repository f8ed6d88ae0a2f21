import type { Grant, PathStep } from '../types';
import { Link } from './ui';

/** A membership path, principal → group → … → group. */
export function PathText(props: { path: PathStep[] }) {
  return (
    <span class="path">
      {props.path.map((step, i) => (
        <span key={step.id}>
          {i > 0 && <span aria-label="member of"> → </span>}
          {step.name || step.id}
        </span>
      ))}
    </span>
  );
}

/** The policies behind some access, each linked to its what-if, with how it reaches the principal. */
export function Grants(props: { grants: Grant[] }) {
  return (
    <ul class="grants">
      {props.grants.map((g) => (
        <li key={g.policy_id}>
          <Link to={`/what-if?policy=${g.policy_id}`}>{g.policy_name ?? g.policy_id}</Link>{' '}
          <span class="muted">
            {g.via === 'principal'
              ? 'names it directly'
              : g.via === 'match'
                ? 'selects it by attributes'
                : g.via === 'delegation'
                  ? 'acting for the delegator'
                  : 'through membership'}
          </span>
          {g.path && g.path.length > 1 && (
            <div>
              <PathText path={g.path} />
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}
