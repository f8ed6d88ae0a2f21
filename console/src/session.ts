import { useEffect, useState } from 'preact/hooks';
import { currentSession, onSession, type Session } from './api';

/** The signed-in client, re-rendering on sign-in, refresh and sign-out. */
export function useSession(): Session | null {
  const [session, setSession] = useState(currentSession);
  useEffect(() => onSession((s) => setSession(s)), []);
  return session;
}

/** Why the console last signed out by itself (a refused refresh), to say so on the sign-in page. */
export function useSignOutReason(): string | undefined {
  const [reason, setReason] = useState<string | undefined>();
  useEffect(() => onSession((s, why) => setReason(s ? undefined : why)), []);
  return reason;
}
