import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { post } from '../api';
import { Gate, Link, Loading, ProblemBox, useFocusHeading, useLoad } from '../components/ui';
import { navigate } from '../router';
import { missingScope, type Feature } from '../scopes';
import { useSession } from '../session';
import type { List, PrincipalSummary } from '../types';

const TYPES = ['USER', 'SERVICE_ACCOUNT', 'AI_AGENT', 'API_KEY'] as const;
const TYPE_LABEL: Record<string, string> = {
  USER: 'People',
  SERVICE_ACCOUNT: 'Service accounts',
  AI_AGENT: 'AI agents',
  API_KEY: 'API keys',
};

/** How many living principals of each type there are: one search per type, one row each. */
function Census() {
  const counts = useLoad(
    (signal) =>
      Promise.all(
        TYPES.map((type) =>
          post<List<PrincipalSummary>>('/v1/principals/search', { query: { type }, limit: 1 }).then(
            (r) => [type, r.pagination.total] as const,
          ),
        ),
      ).then((pairs) => (signal.aborted ? [] : pairs)),
    [],
  );
  if (counts.error) return <ProblemBox error={counts.error} context="Counting principals" />;
  if (!counts.data) return <Loading what="counts" />;
  return (
    <ul class="census" aria-label="Principals by type">
      {counts.data.map(([type, total]) => (
        <li key={type}>
          <Link to={`/search?type=${type}`}>
            <strong>{total.toLocaleString()}</strong>
            <span>{TYPE_LABEL[type]}</span>
          </Link>
        </li>
      ))}
    </ul>
  );
}

/** A feature on the home page: a link (or a small form), or greyed with the scope it lacks. */
function Tile(props: {
  to?: string;
  title: string;
  text: string;
  feature: Feature;
  children?: ComponentChildren;
}) {
  const session = useSession();
  const reason = session ? missingScope(session.scopes, props.feature) : null;
  if (reason) {
    return (
      <li class="tile off" aria-disabled="true">
        <h3>{props.title}</h3>
        <p>{props.text}</p>
        <p class="reason">{reason}</p>
      </li>
    );
  }
  return (
    <li class="tile">
      <h3>{props.to ? <Link to={props.to}>{props.title}</Link> : props.title}</h3>
      <p>{props.text}</p>
      {props.children}
    </li>
  );
}

export function Home() {
  const heading = useFocusHeading('home');
  const [days, setDays] = useState(90);
  const [lookup, setLookup] = useState('');
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>
        Identity graph at a glance
      </h1>
      <Gate feature="search">
        <Census />
        <form
          class="inline-form"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            const text = lookup.trim();
            if (/^prn_[0-9A-HJKMNP-TV-Z]{26}$/i.test(text)) navigate(`/principals/${text}`);
            else navigate(`/search?name=${encodeURIComponent(text)}`);
          }}
        >
          <label>
            Find a principal by name or id
            <input
              value={lookup}
              onInput={(e) => setLookup(e.currentTarget.value)}
              placeholder="Ada, deploy-bot, prn_…"
            />
          </label>
          <button type="submit">Find</button>
        </form>
      </Gate>
      <h2>Findings</h2>
      <ul class="tiles" aria-label="Findings">
        <Tile
          to="/findings/orphaned"
          feature="findings"
          title="Orphaned identities"
          text="Service accounts, API keys and AI agents without a living owner."
        />
        <Tile
          feature="findings"
          title="Dormant identities"
          text="Principals not seen for a number of days you choose."
        >
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              navigate(`/findings/dormant?days=${days}`);
            }}
          >
            <label>
              Not seen for (days)
              <input
                type="number"
                min={1}
                max={3650}
                value={days}
                onInput={(e) => setDays(Number(e.currentTarget.value) || 90)}
                class="narrow"
              />
            </label>
            <button type="submit">Show dormant</button>
          </form>
        </Tile>
      </ul>
      <h2>Explore</h2>
      <ul class="tiles" aria-label="Console features">
        <Tile
          to="/search"
          feature="search"
          title="Search principals"
          text="Filter by type, status, attributes, last login and risk."
        />
        <Tile
          to="/resources"
          feature="resources"
          title="Who can reach a resource"
          text="Every principal with access to a resource, and through which policies."
        />
        <Tile
          to="/what-if"
          feature="policies"
          title="Policy what-if"
          text="Edit a policy and see who would gain or lose access before it goes live."
        />
        <Tile
          to="/decisions"
          feature="decisions"
          title="Decisions explorer"
          text="Evaluate a request and read the engine's explanation."
        />
      </ul>
    </>
  );
}
