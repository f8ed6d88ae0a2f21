import type { Scope } from '../../src/vocabulary/scopes.js';
import { ADMIN_CLIENT_ID, ADMIN_CLIENT_SECRET, type TestApp } from './app.js';
import type { HttpClient } from './http.js';

export interface TestClient {
  id: string;
  secret: string;
}

export const ADMIN: TestClient = { id: ADMIN_CLIENT_ID, secret: ADMIN_CLIENT_SECRET };

export function basic(client: TestClient): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`;
}

/** client_credentials through the real token endpoint. */
export async function tokenFor(
  http: HttpClient,
  client: TestClient,
  scope?: string,
): Promise<{
  access_token: string;
  refresh_token: string;
  scope: string;
  expires_in: number;
}> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
  const res = await http.post('/v1/auth/token', undefined, {
    raw: form.toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic(client) },
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
  return res.body;
}

/** An HTTP client that sends an access token of the given client (the admin by default). */
export async function authed(app: TestApp, client: TestClient = ADMIN, scope?: string): Promise<HttpClient> {
  return app.http.withToken((await tokenFor(app.http, client, scope)).access_token);
}

/** A new API client with the given scopes, created through the API by the admin. */
export async function createClient(app: TestApp, scopes: Scope[], name?: string): Promise<TestClient> {
  const admin = await authed(app);
  const res = await admin.post('/v1/clients', {
    name: name ?? `client-${Math.random().toString(36).slice(2)}`,
    scopes,
  });
  if (res.status !== 201) throw new Error(`client creation failed: ${res.status} ${res.text}`);
  return { id: res.body.id, secret: res.body.client_secret };
}
