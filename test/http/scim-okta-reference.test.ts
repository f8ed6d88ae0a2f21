import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import type { HttpResponse } from '../helpers/http.js';

/**
 * Okta's "Okta SCIM 2.0 SPEC Test" (the Runscope API test Okta publishes for SCIM 2.0 servers, as
 * its "Test your SCIM API" guide describes it), request by request and assertion by assertion,
 * against a connector of profile "okta". This is the suite as Okta distributes it today: twelve
 * requests, 52 declared assertions and one scripted one (on the Groups list).
 *
 * Every request step of the suite is one step below, in the suite's order, named by the suite's
 * note ("Required Test: …", "Optional Test: …"); every assertion of the step is one check, named
 * after its source, property, comparison and value. A step sends its request and runs all its
 * checks, as Runscope does, failing with the list of those that failed. The suite's pause steps
 * (5 and 10 seconds between requests) are left out: nothing here is eventually consistent.
 *
 * Before it runs, the guide has the tester set `SCIMBaseURL` and `auth` (`Bearer <token>`), paste
 * an initial script that draws the `random…` variables and fixes `InvalidUserEmail` and
 * `UserIdThatDoesNotExist`, and create at least one user on the server: `before` does the same.
 */

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const SCIM_BASE = '/scim/v2';

/** The headers of the suite's read requests (its Authorization is `{{auth}}`, added per step). */
const READ_HEADERS = {
  'Accept-Charset': 'utf-8',
  'Content-Type': 'application/scim+json; charset=utf-8',
  Accept: 'application/scim+json',
  'User-Agent': 'OKTA SCIM Integration',
};
/** The headers of the suite's two POSTs. */
const CREATE_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/scim+json; charset=utf-8' };

type Json = Record<string, any>;
/** The suite's variables: the initial ones, then those its steps extract. */
type Vars = Record<string, string>;

interface Timed extends HttpResponse {
  /** Milliseconds from sending the request to having read the whole response. */
  time: number;
}
type Assertion = [name: string, check: (res: Timed, vars: Vars) => void];

interface Step {
  note: string;
  method: 'GET' | 'POST';
  /** After `{{SCIMBaseURL}}`, with the variables filled in. */
  url: (vars: Vars) => string;
  headers: Record<string, string>;
  /** `Authorization`; `{{auth}}` unless the step says otherwise. */
  authorization?: string;
  body?: (vars: Vars) => Json;
  assertions: Assertion[];
  /** The step's variables: a name and the JSON property it is read from. */
  variables?: [name: string, property: string][];
  /** The step's script, run after its assertions. */
  script?: Assertion;
}

/** A JSON property of the response as Runscope names it: `Resources[0].emails[0].value`. */
function property(res: HttpResponse, path: string): unknown {
  let value: any = typeof res.body === 'string' ? JSON.parse(res.text) : res.body;
  for (const key of path.split(/[.[\]]+/).filter(Boolean)) {
    if (value === null || value === undefined) return undefined;
    value = value[/^\d+$/.test(key) ? Number(key) : key];
  }
  return value;
}

/** Runscope's "empty": absent, null, or an empty string, array or object. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

const status = (code: number): Assertion => [
  `response status equals ${code}`,
  (res) => expect(res.status, res.text).to.equal(code),
];
const notEmpty = (path: string): Assertion => [
  `${path} is not empty`,
  (res) =>
    expect(isEmpty(property(res, path)), `${path}: ${JSON.stringify(property(res, path))}`).to.equal(false),
];
const hasValue = (path: string, value: string): Assertion => [
  `${path} has the value ${value}`,
  (res) => expect(property(res, path)).to.be.an('array').that.includes(value),
];
const contains = (path: string, value: string): Assertion => [
  `${path} contains ${value}`,
  (res) => {
    const actual = property(res, path);
    expect(Array.isArray(actual) || typeof actual === 'string', JSON.stringify(actual)).to.equal(true);
    expect(actual).to.include(value);
  },
];
const isNumber = (path: string): Assertion => [
  `${path} is a number`,
  (res) => expect(property(res, path)).to.be.a('number'),
];
/** Runscope's "equals" compares the text of the value: `true` equals "true", 0 equals "0". */
const equals = (path: string, value: (vars: Vars) => string): Assertion => [
  `${path} equals ${value({})}`,
  (res, vars) => expect(String(property(res, path))).to.equal(value(vars)),
];
const equalsNumber = (path: string, value: number): Assertion => [
  `${path} equals the number ${value}`,
  (res) => expect(property(res, path)).to.equal(value),
];
/** A variable in an assertion's name shows as `{{name}}`; in its check, as its value. */
const variable =
  (name: string) =>
  (vars: Vars): string =>
    vars[name] ?? `{{${name}}}`;

/** The body of the suite's two POSTs: the second sends the userName as the email. */
const oktaUser = (vars: Vars, email: string): Json => ({
  schemas: [USER],
  userName: vars['randomUsername'],
  name: { givenName: vars['randomGivenName'], familyName: vars['randomFamilyName'] },
  emails: [{ primary: true, value: email, type: 'work' }],
  displayName: `${vars['randomGivenName']} ${vars['randomFamilyName']}`,
  active: true,
});

const STEPS: Step[] = [
  {
    note: 'Required Test: Test Users endpoint',
    method: 'GET',
    url: () => '/Users?count=1&startIndex=1',
    headers: READ_HEADERS,
    assertions: [
      status(200),
      notEmpty('Resources'),
      hasValue('schemas', LIST),
      isNumber('itemsPerPage'),
      isNumber('startIndex'),
      isNumber('totalResults'),
      notEmpty('Resources[0].id'),
      notEmpty('Resources[0].name.familyName'),
      notEmpty('Resources[0].name.givenName'),
      notEmpty('Resources[0].userName'),
      notEmpty('Resources[0].active'),
      notEmpty('Resources[0].emails[0].value'),
    ],
    variables: [['ISVUserid', 'Resources[0].id']],
  },
  {
    note: 'Required Test: Get Users/{{id}} ',
    method: 'GET',
    url: (vars) => `/Users/${vars['ISVUserid']}`,
    headers: READ_HEADERS,
    assertions: [
      status(200),
      notEmpty('id'),
      notEmpty('name.familyName'),
      notEmpty('name.givenName'),
      notEmpty('userName'),
      notEmpty('active'),
      notEmpty('emails[0].value'),
      equals('id', variable('ISVUserid')),
    ],
  },
  {
    note: 'Required Test: Test invalid User by username',
    method: 'GET',
    url: (vars) => `/Users?filter=userName eq "${vars['InvalidUserEmail']}"`,
    headers: READ_HEADERS,
    assertions: [status(200), hasValue('schemas', LIST), equals('totalResults', () => '0')],
  },
  {
    note: 'Required Test: Test invalid User by ID',
    method: 'GET',
    url: (vars) => `/Users/${vars['UserIdThatDoesNotExist']}`,
    headers: READ_HEADERS,
    assertions: [status(404), notEmpty('detail'), hasValue('schemas', ERROR)],
  },
  {
    note: "Required Test: Make sure random user doesn't exist",
    method: 'GET',
    url: (vars) => `/Users?filter=userName eq "${vars['randomEmail']}"`,
    headers: READ_HEADERS,
    assertions: [status(200), equalsNumber('totalResults', 0), hasValue('schemas', LIST)],
  },
  {
    note: 'Required Test: Create Okta user with realistic values',
    method: 'POST',
    url: () => '/Users',
    headers: CREATE_HEADERS,
    body: (vars) => oktaUser(vars, vars['randomEmail']!),
    assertions: [
      status(201),
      equals('active', () => 'true'),
      notEmpty('id'),
      equals('name.familyName', variable('randomFamilyName')),
      equals('name.givenName', variable('randomGivenName')),
      contains('schemas', USER),
      equals('userName', variable('randomUsername')),
    ],
    variables: [
      ['idUserOne', 'id'],
      ['randomUserEmail', 'emails[0].value'],
    ],
  },
  {
    note: 'Required Test: Verify that user was created',
    method: 'GET',
    url: (vars) => `/Users/${vars['idUserOne']}`,
    headers: READ_HEADERS,
    assertions: [
      status(200),
      equals('userName', variable('randomUsername')),
      equals('name.familyName', variable('randomFamilyName')),
      equals('name.givenName', variable('randomGivenName')),
    ],
  },
  {
    note: 'Required Test: Expect failure when recreating user with same values',
    method: 'POST',
    url: () => '/Users',
    headers: CREATE_HEADERS,
    body: (vars) => oktaUser(vars, vars['randomUsername']!),
    assertions: [status(409)],
  },
  {
    note: 'Required Test: Username Case Sensitivity Check',
    method: 'GET',
    url: (vars) => `/Users?filter=userName eq "${vars['randomUsernameCaps']}"`,
    headers: READ_HEADERS,
    assertions: [status(200)],
  },
  {
    note: 'Optional Test: Verify Groups endpoint',
    method: 'GET',
    url: () => '/Groups',
    headers: READ_HEADERS,
    // The suite also asks for an answer within 600 ms; speed is measured by `npm run bench:scim`
    // (list queries), never asserted by a test on a shared machine.
    assertions: [status(200)],
    // No groups passes as it is; otherwise Resources is an array.
    script: [
      'script: Resources is of type Array',
      (res) => {
        const data = JSON.parse(res.text);
        if (data.totalResults !== 0) expect(data.Resources).to.be.an('array');
      },
    ],
  },
  {
    note: 'Required Test: Check status 401',
    method: 'GET',
    url: (vars) => `/Users?filter=userName eq "${vars['randomUsernameCaps']}"`,
    headers: READ_HEADERS,
    authorization: 'non-token',
    assertions: [status(401), notEmpty('detail'), equals('status', () => '401'), hasValue('schemas', ERROR)],
  },
  {
    note: 'Required Test: Check status 404',
    method: 'GET',
    url: () => '/Users/00919288221112222',
    headers: READ_HEADERS,
    assertions: [status(404), notEmpty('detail'), equals('status', () => '404'), hasValue('schemas', ERROR)],
  },
];

/** What the initial script draws: a given name, a family name, and an address made of the two. */
function initialVariables(token: string): Vars {
  const digits = (n: number): string => String(Math.floor(Math.random() * 10 ** n)).padStart(n, '0');
  const letters = Array.from({ length: 8 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26)));
  const randomGivenName = `Runscope${digits(3)}`;
  const randomFamilyName = `${letters.join('').replace(/^./, (c) => c.toUpperCase())}${digits(3)}`;
  const local = `${randomGivenName}${randomFamilyName}`;
  return {
    auth: `Bearer ${token}`,
    InvalidUserEmail: 'abcdefgh@example.com',
    UserIdThatDoesNotExist: '010101001010101011001010101011',
    randomGivenName,
    randomFamilyName,
    randomEmail: `${local}@example.com`,
    randomUsername: `${local}@example.com`,
    randomUsernameCaps: `${local.toUpperCase()}@example.com`,
  };
}

let sequence = 0;
const uniq = (base: string): string => `${base}${Date.now().toString(36)}${(sequence += 1)}`;

describe("Okta's SCIM 2.0 SPEC Test (Runscope), against a connector of profile okta", () => {
  const fx = useApp();
  let vars: Vars = {};

  before(async () => {
    const connector = await fx.api.post('/v1/connectors', { name: uniq('okta-reference-'), profile: 'okta' });
    expect(connector.status, connector.text).to.equal(201);
    vars = initialVariables(connector.body.token);
    // The guide's precondition: at least one user on the server before the suite runs.
    const existing = await fx.http.post(
      `${SCIM_BASE}/Users`,
      {
        schemas: [USER],
        userName: 'existing.user@example.com',
        name: { givenName: 'Existing', familyName: 'User' },
        emails: [{ primary: true, value: 'existing.user@example.com', type: 'work' }],
        displayName: 'Existing User',
        active: true,
      },
      { headers: { ...CREATE_HEADERS, Authorization: vars['auth']! } },
    );
    expect(existing.status, existing.text).to.equal(201);
  });

  async function send(step: Step): Promise<Timed> {
    const body = step.body ? JSON.stringify(step.body(vars)) : undefined;
    const started = performance.now();
    const res = await fx.http.request(step.method, `${SCIM_BASE}${step.url(vars)}`, {
      headers: { ...step.headers, Authorization: step.authorization ?? vars['auth']! },
      ...(body === undefined ? {} : { raw: body }),
    });
    return { ...res, time: performance.now() - started };
  }

  STEPS.forEach((step, index) => {
    it(`${index + 1}. ${step.note.trim()}`, async () => {
      const res = await send(step);
      const failed: string[] = [];
      for (const [name, check] of [...step.assertions, ...(step.script ? [step.script] : [])]) {
        try {
          check(res, vars);
        } catch (err) {
          failed.push(`${name}: ${(err as Error).message}`);
        }
      }
      for (const [name, path] of step.variables ?? []) {
        try {
          const value = property(res, path);
          if (value !== undefined) vars[name] = typeof value === 'string' ? value : JSON.stringify(value);
        } catch {
          // Runscope leaves a variable it cannot extract unset.
        }
      }
      if (failed.length > 0)
        throw new Error(`${step.method} ${step.url(vars)} → ${res.status}\n  ${failed.join('\n  ')}`);
    });
  });
});
