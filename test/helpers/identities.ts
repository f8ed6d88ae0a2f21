import { expect } from 'chai';
import type { TestApp } from './app.js';
import type { HttpClient } from './http.js';

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

export interface ScimUser {
  userName: string;
  externalId?: string;
  email?: string;
  displayName?: string;
  /** Becomes `attributes.role`. */
  title?: string;
  /** Becomes `attributes.department`. */
  department?: string;
}

/** An identity connector and the SCIM client its token opens. */
export interface Connector {
  id: string;
  name: string;
  scim: HttpClient;
  /** Provisions a user through SCIM; answers the principal id. */
  provision(user: ScimUser): Promise<string>;
}

/** A connector made through the API, provisioning USER principals as an identity provider would. */
export async function createConnector(app: TestApp, api: HttpClient, name: string): Promise<Connector> {
  const res = await api.post('/v1/connectors', { name });
  expect(res.status, res.text).to.equal(201);
  const scim = app.http.withToken(res.body.token as string);
  return {
    id: res.body.id as string,
    name: res.body.name as string,
    scim,
    async provision(user: ScimUser): Promise<string> {
      const body = {
        schemas: [USER_SCHEMA, ENTERPRISE],
        userName: user.userName,
        ...(user.externalId !== undefined ? { externalId: user.externalId } : {}),
        ...(user.displayName !== undefined ? { displayName: user.displayName } : {}),
        ...(user.title !== undefined ? { title: user.title } : {}),
        emails: [{ value: user.email ?? user.userName, type: 'work', primary: true }],
        active: true,
        ...(user.department !== undefined ? { [ENTERPRISE]: { department: user.department } } : {}),
      };
      const created = await scim.post('/scim/v2/Users', body);
      expect(created.status, created.text).to.equal(201);
      return created.body.id as string;
    },
  };
}
