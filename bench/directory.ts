/**
 * The directory an identity provider holds, as the benchmarks that provision through SCIM send
 * it (bench/scim.ts, bench/enterprise.ts): people in a manager tree and groups of very different
 * sizes, each user as a SCIM User and each group as a SCIM Group the way Microsoft Entra sends
 * them, the JSON-lines snapshot `POST /v1/connectors/{id}/sync` takes, and the connector they go
 * through. Everything is deterministic from its seed.
 */
import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from '../src/scim/schema.js';
import type { BenchClient } from './client.js';
import { DEPARTMENTS, FIRST, LAST, LOCATIONS, ROLES, rng } from './org.js';

export interface DirectoryUser {
  externalId: string;
  userName: string;
  givenName: string;
  familyName: string;
  title: string;
  department: string;
  employeeNumber: string;
  costCenter: string;
  location: string;
  phone: string;
  active: boolean;
  /** The position of the user's manager, always an earlier user; null for the top and a few others. */
  manager: number | null;
}

export interface DirectoryGroup {
  externalId: string;
  displayName: string;
  /** Positions of the member users. */
  members: number[];
}

export interface Directory {
  users: DirectoryUser[];
  groups: DirectoryGroup[];
  memberships: number;
}

export const capitalised = (text: string): string =>
  text
    .split(' ')
    .map((w) => (w.length <= 2 ? w.toUpperCase() : `${w[0]!.toUpperCase()}${w.slice(1)}`))
    .join(' ');

/**
 * A directory as Entra holds one: people in a manager tree (eight reports a manager; about one in
 * twelve has no manager), GUID object ids, user principal names in mixed case, and groups of very
 * different sizes (a few large ones, most small). Each user is in `groupsPerUser` groups (at most
 * as many as there are), or, with 0, in one or two of them, half and half.
 */
export function generateDirectory(
  count: number,
  groupCount: number,
  seed: number,
  groupsPerUser = 0,
): Directory {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const hex = (n: number): string =>
    Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
  const guid = (): string =>
    `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(random() * 4)]}${hex(3)}-${hex(12)}`;
  const users: DirectoryUser[] = [];
  for (let i = 0; i < count; i += 1) {
    const givenName = pick(FIRST);
    const familyName = pick(LAST);
    users.push({
      externalId: guid(),
      userName: `${givenName}.${familyName.replace(/\s+/g, '')}${i}@contoso.example`,
      givenName,
      familyName,
      title: capitalised(pick(ROLES)),
      department: capitalised(pick(DEPARTMENTS)),
      employeeNumber: String(100_000 + i),
      costCenter: `CC-${1000 + Math.floor(random() * 300)}`,
      location: pick(LOCATIONS).toUpperCase(),
      phone: `+1 555 ${String(Math.floor(random() * 10_000)).padStart(4, '0')}`,
      active: random() >= 0.03,
      manager: i === 0 || random() < 0.08 ? null : Math.floor((i - 1) / 8),
    });
  }
  const kinds = ['Admins', 'Readers', 'On-call', 'Leads', 'Guild', 'Project', 'All'];
  const groups: DirectoryGroup[] = Array.from({ length: groupCount }, (_, k) => ({
    externalId: guid(),
    displayName: `${capitalised(pick(DEPARTMENTS))} ${pick(LOCATIONS).toUpperCase()} ${pick(kinds)} ${k}`,
    members: [],
  }));
  let memberships = 0;
  if (groups.length > 0) {
    for (let i = 0; i < users.length; i += 1) {
      const chosen = new Set<number>();
      const wanted = groupsPerUser > 0 ? groupsPerUser : random() < 0.5 ? 2 : 1;
      // Skewed towards the first groups: a few large groups, a long tail of small ones.
      while (chosen.size < Math.min(wanted, groups.length))
        chosen.add(Math.floor(groups.length * random() ** 1.5));
      for (const g of chosen) groups[g]!.members.push(i);
      memberships += chosen.size;
    }
  }
  return { users, groups, memberships };
}

/** The email a user's SCIM User carries (its primary one), as the service stores it. */
export const emailOf = (u: DirectoryUser): string => u.userName.toLowerCase();

/** A User as Entra sends it on creation; `managerRef` a SCIM id or an externalId. */
export function userResource(u: DirectoryUser, managerRef?: string): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
    externalId: u.externalId,
    userName: u.userName,
    active: u.active,
    displayName: `${u.givenName} ${u.familyName}`,
    title: u.title,
    preferredLanguage: 'en-US',
    name: {
      formatted: `${u.givenName} ${u.familyName}`,
      familyName: u.familyName,
      givenName: u.givenName,
    },
    emails: [{ primary: true, type: 'work', value: emailOf(u) }],
    phoneNumbers: [{ type: 'work', value: u.phone }],
    addresses: [{ type: 'work', locality: u.location, country: 'US', primary: true }],
    [ENTERPRISE_SCHEMA]: {
      employeeNumber: u.employeeNumber,
      department: u.department,
      costCenter: u.costCenter,
      ...(managerRef ? { manager: { value: managerRef } } : {}),
    },
    meta: { resourceType: 'User' },
  };
}

export function groupResource(
  g: DirectoryGroup,
  memberRef: (position: number) => string,
): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    externalId: g.externalId,
    displayName: g.displayName,
    members: g.members.map((m) => ({ value: memberRef(m) })),
    meta: { resourceType: 'Group' },
  };
}

/**
 * The snapshot the sync takes: one User or Group a line, users in directory order (managers
 * first), managers and members named by externalId, since the service's ids are not known yet.
 */
export function snapshot(dir: Directory): string {
  const lines: string[] = [];
  for (const u of dir.users) {
    const manager = u.manager === null ? undefined : dir.users[u.manager]!.externalId;
    lines.push(JSON.stringify(userResource(u, manager)));
  }
  for (const g of dir.groups) lines.push(JSON.stringify(groupResource(g, (m) => dir.users[m]!.externalId)));
  return `${lines.join('\n')}\n`;
}

// ---- the connector -------------------------------------------------------------------------------

export interface Connector {
  id: string;
  name: string;
  token: string;
  /** The service as the connector calls it: with the connector's token. */
  client: BenchClient;
}

/** A connector of its own, created by the administrator through `POST /v1/connectors`. */
export async function createConnector(admin: BenchClient, label: string): Promise<Connector> {
  const name = `bench-${label}-${Date.now().toString(36)}`;
  const body = await admin.json<{ id: string; name: string; token: string }>(
    'POST',
    '/v1/connectors',
    { name, description: 'benchmark' },
    { expect: [201] },
  );
  return { id: body.id, name: body.name, token: body.token, client: admin.withToken(body.token) };
}
