import type { ComponentChildren } from 'preact';
import { signOut } from './api';
import { Link } from './components/ui';
import { Decisions } from './pages/decisions';
import { Findings } from './pages/findings';
import { Home } from './pages/home';
import { PrincipalPage } from './pages/principal';
import { ResourcePage } from './pages/resource';
import { Search } from './pages/search';
import { SignIn } from './pages/sign-in';
import { WhatIf } from './pages/what-if';
import { receivedProposal } from './proposal';
import { match, useLocation, type Location } from './router';
import { missingScope, type Feature } from './scopes';
import { useSession, useSignOutReason } from './session';

const NAV: { to: string; label: string; feature?: Feature; prefix: string }[] = [
  { to: '/', label: 'Home', prefix: '/' },
  { to: '/search', label: 'Search', feature: 'search', prefix: '/search' },
  { to: '/resources', label: 'Resources', feature: 'resources', prefix: '/resources' },
  { to: '/what-if', label: 'Policy what-if', feature: 'policies', prefix: '/what-if' },
  { to: '/decisions', label: 'Decisions', feature: 'decisions', prefix: '/decisions' },
  { to: '/findings/orphaned', label: 'Findings', feature: 'findings', prefix: '/findings' },
];

function route(location: Location): ComponentChildren {
  const { path, query } = location;
  let m: Record<string, string> | null;
  if (path === '/') return <Home />;
  if (path === '/search') return <Search />;
  if ((m = match('/principals/:id', path))) return <PrincipalPage key={m['id']} id={m['id']!} />;
  if (path === '/resources')
    return <ResourcePage type={query.get('type') ?? ''} identifier={query.get('identifier') ?? ''} />;
  if (path === '/what-if') {
    const policyId = query.get('policy') ?? '';
    return <WhatIf policyId={policyId} received={policyId ? receivedProposal(location, policyId) : null} />;
  }
  // A new request in the address starts a new form: the form reads the address when it mounts.
  if (path === '/decisions') return <Decisions key={query.toString()} initial={query} />;
  if ((m = match('/findings/:kind', path)) && (m['kind'] === 'orphaned' || m['kind'] === 'dormant')) {
    return <Findings kind={m['kind']} days={Number(query.get('days') ?? '90') || 90} />;
  }
  return (
    <section class="panel">
      <h1>Not found</h1>
      <p>
        The console has no page at <code>{path}</code>. <Link to="/">Go home</Link>.
      </p>
    </section>
  );
}

export function App() {
  const session = useSession();
  const reason = useSignOutReason();
  const location = useLocation();
  if (!session) return <SignIn {...(reason ? { notice: reason } : {})} />;
  const current = NAV.filter((n) =>
    n.prefix === '/' ? location.path === '/' : location.path.startsWith(n.prefix),
  ).at(-1);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link to="/" class="brand">
          Principals &amp; Access <span>Console</span>
        </Link>
        <nav aria-label="Console">
          <ul>
            {NAV.map((n) => {
              const reason = n.feature ? missingScope(session.scopes, n.feature) : null;
              return (
                <li key={n.to}>
                  {reason ? (
                    <span class="nav-off" aria-disabled="true" title={reason}>
                      {n.label}
                    </span>
                  ) : (
                    <Link to={n.to} current={current === n}>
                      {n.label}
                    </Link>
                  )}
                </li>
              );
            })}
          </ul>
        </nav>
        <div class="who">
          <span title={[...session.scopes].join(' ')}>
            Signed in as <code>{session.clientId}</code>
          </span>
          <button type="button" class="secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {route(location)}
      </main>
    </>
  );
}
