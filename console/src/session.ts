import { useEffect, useState } from 'preact/hooks';
import { currentSession, onSession, type Session } from './api';

/** The signed-in client, re-rendering on sign-in, refresh and sign-out. */
export function useSession(): Session | null {
  const [session, setSession] = useState(currentSession);
  useEffect(() => onSession((s) => setSession(s)), []);
  return session;
}
