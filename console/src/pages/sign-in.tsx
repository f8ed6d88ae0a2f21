import { useState } from 'preact/hooks';
import { signIn } from '../api';
import { ProblemBox } from '../components/ui';

/** Sign-in with an API client's credentials (OAuth client credentials grant). */
export function SignIn(props: { notice?: string }) {
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="sign-in">
      <form
        class="panel"
        aria-labelledby="sign-in-title"
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          signIn(clientId.trim(), secret).then(
            () => setSecret(''),
            (err: unknown) => {
              setError(err);
              setBusy(false);
            },
          );
        }}
      >
        <h1 id="sign-in-title">Principals &amp; Access Console</h1>
        <p class="muted">
          Sign in with an API client's id and secret. What the console shows follows the client's scopes. The
          token stays in this tab's memory only: closing or reloading the tab signs you out.
        </p>
        {props.notice && <p class="notice">{props.notice}</p>}
        <label>
          Client id
          <input
            name="client_id"
            autoComplete="username"
            required
            value={clientId}
            onInput={(e) => setClientId(e.currentTarget.value)}
            placeholder="cli_…"
          />
        </label>
        <label>
          Client secret
          <input
            name="client_secret"
            type="password"
            autoComplete="current-password"
            required
            value={secret}
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error !== null && <ProblemBox error={error} context="Sign-in failed" />}
      </form>
    </main>
  );
}
