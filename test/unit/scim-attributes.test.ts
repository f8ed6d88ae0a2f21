import { expect } from 'chai';
import { CONNECTOR_ATTRIBUTES, CONNECTOR_METADATA, MANAGER_KEY } from '../../src/principals/model.js';
import { compilePredicate, type Subject } from '../../src/principals/search/evaluate.js';
import {
  ATTRIBUTE_TABLE,
  caseExactOf,
  rowsOf,
  splitPath,
  USER_RESOURCE,
  valueAt,
  writesOf,
  type AttributeRow,
  type UserState,
} from '../../src/scim/attributes.js';
import { schemas } from '../../src/scim/discovery.js';
import { ScimError } from '../../src/scim/errors.js';
import { evaluateFilter, parseFilter } from '../../src/scim/filter.js';
import { findNamed, keyOf, memberOf } from '../../src/scim/names.js';
import { patchResource } from '../../src/scim/patch.js';
import { project } from '../../src/scim/projection.js';
import { compileUserFilter } from '../../src/scim/query.js';
import { isObject, type Json, type ScimObject } from '../../src/scim/resource.js';
import { ENTERPRISE_SCHEMA, USER_SCHEMA, type AttributeDef } from '../../src/scim/schema.js';
import { mappedAttributes, readUser, userFields, userView, type UserFields } from '../../src/scim/users.js';
import { instantKey } from '../../src/time.js';

const BASE = 'https://scim.example/scim/v2';

/** What a client sends for a row in the tests: a value its type takes, unlike any default. */
function sample(schema: string, row: AttributeRow): Json {
  const label = `${splitPath(row.path).attribute}-Sample`;
  const subs = rowsOf('User').filter(
    (r) => r.schema === schema && r.row.path.startsWith(`${row.path}.`) && r.row.type === 'string',
  );
  switch (row.type) {
    case 'boolean':
      return false;
    case 'complex': {
      const element = Object.fromEntries(
        subs.map((r) => [splitPath(r.row.path).sub!, `${label}.${r.row.path}`]),
      );
      return row.multiValued ? [{ ...element, primary: true }] : element;
    }
    default:
      return row.path === 'userName' ? 'Ada.Sample@Example.com' : `${label} Value`;
  }
}

/** `user` with `value` at a row's path (an extension object made when needed). */
function withValue(user: ScimObject, schema: string, path: string, value: Json): ScimObject {
  const out = structuredClone(user);
  let holder = out;
  if (schema !== USER_SCHEMA) {
    holder = isObject(out[schema]) ? out[schema] : (out[schema] = {});
    out['schemas'] = [USER_SCHEMA, schema];
  }
  const { attribute, sub } = splitPath(path);
  if (sub === undefined) holder[attribute] = value;
  else holder[attribute] = { ...(isObject(holder[attribute]) ? holder[attribute] : {}), [sub]: value };
  return out;
}

const base = (): ScimObject => ({ schemas: [USER_SCHEMA], userName: 'base@example.com' });

/** What the service holds of a principal provisioned with `fields`. */
function state(fields: UserFields): UserState {
  return {
    id: 'prn_0123456789abcdef01234567',
    active: fields.active,
    created: '2024-05-01T10:00:00.000Z',
    lastModified: '2024-05-02T11:30:00.000Z',
    version: 3,
    managerId: null,
    groups: [],
  };
}

/** The principal as the search evaluates it, as the SCIM user services write it from `fields`. */
function subject(fields: UserFields, held: UserState): Subject {
  return {
    id: held.id,
    type: 'USER',
    status: fields.active ? 'active' : 'suspended',
    name: fields.name,
    email: fields.email,
    connector_id: fields.externalId,
    user_name: fields.userName.toLowerCase(),
    connector_source: 'okta',
    created_at: instantKey(held.created)!,
    updated_at: instantKey(held.lastModified)!,
    last_login: null,
    risk_score: 0,
    attributes: mappedAttributes(fields, null),
  };
}

const writing = rowsOf('User').filter(({ row }) => writesOf(row).length > 0);
const filtered = rowsOf('User').filter(({ row }) => row.filter !== undefined);

/** A user carrying a sample value for every row that writes to the principal. */
function fullUser(): ScimObject {
  let user = base();
  for (const { schema, row } of writing) {
    const { sub } = splitPath(row.path);
    // A row within a complex attribute written whole already has its sample there.
    if (
      sub !== undefined &&
      writing.some((w) => w.schema === schema && w.row.path === splitPath(row.path).attribute)
    )
      continue;
    user = withValue(user, schema, row.path, sample(schema, row));
  }
  return readUser(user);
}

const targetsOf = (fields: UserFields): Record<string, unknown> => ({
  user_name: fields.userName,
  connector_id: fields.externalId,
  name: fields.name,
  email: fields.email,
  status: fields.active ? 'active' : 'suspended',
  manager: fields.managerRef,
  ...Object.fromEntries(Object.entries(fields.attributes).map(([k, v]) => [`attributes.${k}`, v])),
  ...Object.fromEntries(Object.entries(fields.metadata).map(([k, v]) => [`metadata.${k}`, v])),
});

/** Finds the definition at `path` among published definitions. */
function publishedAt(defs: readonly AttributeDef[], path: string): AttributeDef | undefined {
  const { attribute, sub } = splitPath(path);
  const def = defs.find((d) => d.name === attribute);
  return sub === undefined ? def : def?.subAttributes?.find((d) => d.name === sub);
}

describe('SCIM attribute table', () => {
  describe('/Schemas', () => {
    const published = schemas(BASE);

    it('publishes every published row, with its characteristics, and nothing else', () => {
      expect(published.map((s) => s['id'])).to.deep.equal(ATTRIBUTE_TABLE.map((t) => t.schema));
      for (const table of ATTRIBUTE_TABLE) {
        const doc = published.find((s) => s['id'] === table.schema)!;
        expect(doc).to.include({ name: table.name, description: table.description });
        const attributes = doc['attributes'] as unknown as AttributeDef[];
        const rows = table.rows.filter((r) => !r.unpublished);
        for (const row of rows) {
          const def = publishedAt(attributes, row.path);
          expect(def, `${table.name} ${row.path}`).to.not.equal(undefined);
          expect(def, row.path).to.deep.include({
            type: row.type,
            multiValued: row.multiValued ?? false,
            required: row.required ?? false,
            caseExact: row.caseExact ?? false,
            mutability: row.mutability ?? 'readWrite',
            returned: row.returned ?? 'default',
            uniqueness: row.uniqueness ?? 'none',
            description: row.description ?? '',
          });
        }
        const count = attributes.reduce((n, a) => n + 1 + (a.subAttributes?.length ?? 0), 0);
        expect(count, table.name).to.equal(rows.length);
        for (const row of table.rows.filter((r) => r.unpublished))
          expect(publishedAt(attributes, row.path), row.path).to.equal(undefined);
      }
    });

    it('gives each sub-attribute row an attribute row of its schema before it', () => {
      for (const table of ATTRIBUTE_TABLE)
        table.rows.forEach((row, i) => {
          const { attribute, sub } = splitPath(row.path);
          if (sub === undefined) return;
          const parent = table.rows.slice(0, i).find((r) => r.path === attribute);
          expect(parent?.type, `${table.name} ${row.path}`).to.equal('complex');
        });
    });
  });

  describe('the principal', () => {
    it('is written only in the keys a connector owns, and each of those by some row', () => {
      const targets = new Set(writing.flatMap(({ row }) => writesOf(row).map((w) => w.to)));
      const keys = (prefix: string) =>
        [...targets].filter((t) => t.startsWith(prefix)).map((t) => t.slice(prefix.length));
      expect(keys('attributes.').sort()).to.deep.equal(
        CONNECTOR_ATTRIBUTES.filter((k) => k !== MANAGER_KEY).sort(),
      );
      expect(keys('metadata.').sort()).to.deep.equal([...CONNECTOR_METADATA].sort());
      // The manager key is set from the manager the `manager` target resolves to.
      expect(targets.has('manager')).to.equal(true);
    });

    for (const { schema, row } of writing) {
      describe(`${schema === USER_SCHEMA ? '' : 'enterprise '}${row.path}`, () => {
        const value = sample(schema, row);
        const sent = readUser(withValue(base(), schema, row.path, value));
        const fields = userFields(sent);
        const targets = writesOf(row).map((w) => w.to);

        it('writes what it maps to on create', () => {
          const without = targetsOf(userFields(readUser(base())));
          const given = targetsOf(fields);
          for (const target of targets) expect(given[target], target).to.not.deep.equal(without[target]);
        });

        it('renders what was written', () => {
          const shown = userView(sent, state(fields), BASE);
          expect(valueAt(shown, schema, row.path)).to.deep.equal(value);
        });

        it('writes the same through PATCH replace, and PATCH remove takes it back (unless required)', () => {
          const path = schema === USER_SCHEMA ? row.path : `${schema}:${row.path}`;
          const before = userView(readUser(base()), state(userFields(readUser(base()))), BASE);
          const replaced = readUser(patchResource(before, [{ op: 'replace', path, value }], USER_RESOURCE));
          expect(targetsOf(userFields(replaced))).to.deep.equal(targetsOf(fields));
          // A User cannot be without a required attribute.
          if (row.required) return;
          const removed = readUser(patchResource(replaced, [{ op: 'remove', path }], USER_RESOURCE));
          expect(targetsOf(userFields(removed))).to.deep.equal(targetsOf(userFields(readUser(base()))));
        });
      });
    }

    it('refuses a value beyond the bound of its target, naming the attribute that ranks first for it', () => {
      const long = 'x'.repeat(1025);
      expect(() => userFields(readUser({ ...base(), name: { givenName: long } })))
        .to.throw(ScimError)
        .with.property('message')
        .that.matches(/^displayName is longer than 1024 characters/);
      expect(() => userFields(readUser({ ...base(), title: long })))
        .to.throw(ScimError)
        .with.property('message')
        .that.matches(/^title is longer/);
    });
  });

  describe('filters', () => {
    const user = fullUser();
    const fields = userFields(user);
    const held = state(fields);
    const shown = userView(user, held, BASE);
    const principal = subject(fields, held);
    const caseExact = caseExactOf('User');

    for (const { schema, row } of filtered) {
      it(`${row.path} selects on the principal what the filter selects on the User`, () => {
        const value = valueAt(shown, schema, row.path);
        const path = schema === USER_SCHEMA ? row.path : `${schema}:${row.path}`;
        const operands =
          typeof value === 'boolean'
            ? [String(value), String(!value)]
            : typeof value === 'string'
              ? [value, value.toUpperCase(), value.slice(0, 3), value.slice(-3), 'nothing like it']
              : [];
        expect(operands, `${row.path} renders ${JSON.stringify(value)}`).to.not.deep.equal([]);
        // A timestamp is compared with instants, in order (anything else is 400 invalidFilter).
        const timestamp = row.filter!.compare === 'timestamp';
        const ops = timestamp
          ? ['eq', 'ne', 'gt', 'ge', 'lt', 'le']
          : ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'];
        const filters = [
          `${path} pr`,
          ...ops.flatMap((op) =>
            (timestamp
              ? [value as string, '2024-05-01T09:00:00Z', '2024-05-01T12:00:00+02:00']
              : operands
            ).map((o) => `${path} ${op} ${typeof value === 'boolean' ? o : JSON.stringify(o)}`),
          ),
        ];
        let exact = 0;
        for (const text of filters) {
          const filter = parseFilter(text);
          const compiled = compileUserFilter(filter);
          const onUser = evaluateFilter(filter, shown, { caseExact });
          const onPrincipal = compilePredicate(compiled.query)(principal);
          if (compiled.exact) {
            exact += 1;
            expect(onPrincipal, text).to.equal(onUser);
          } else if (onUser) expect(onPrincipal, `${text} (narrows)`).to.equal(true);
        }
        // A rule that never compiles exactly would leave every filter to the candidates.
        expect(exact, row.path).to.be.greaterThan(0);
      });
    }

    it('reads an unqualified extension attribute as the extension row, as a filter reads the User', () => {
      const qualified = compileUserFilter(parseFilter(`${ENTERPRISE_SCHEMA}:department eq "R&D"`));
      expect(compileUserFilter(parseFilter('DEPARTMENT eq "R&D"'))).to.deep.equal(qualified);
      expect(qualified.exact).to.equal(true);
    });

    it('compares case-exactly where the row says so', () => {
      expect(caseExact({ attribute: 'ID' })).to.equal(true);
      expect(caseExact({ uri: USER_SCHEMA, attribute: 'x509certificates', sub: 'VALUE' })).to.equal(true);
      expect(caseExact({ attribute: 'userName' })).to.equal(false);
      expect(caseExactOf('Group')({ attribute: 'members', sub: 'value' })).to.equal(true);
    });
  });

  describe('PATCH and projection', () => {
    it('refuses a PATCH of a read-only attribute and takes one element of a multi-valued one as a list', () => {
      const user = userView(readUser(base()), state(userFields(readUser(base()))), BASE);
      for (const { row } of rowsOf('User').filter(
        ({ schema, row }) =>
          schema === USER_SCHEMA && row.mutability === 'readOnly' && !row.path.includes('.'),
      )) {
        expect(
          () => patchResource(user, [{ op: 'replace', path: row.path, value: 'x' }], USER_RESOURCE),
          row.path,
        )
          .to.throw(ScimError)
          .with.property('scimType', 'mutability');
      }
      for (const { row } of rowsOf('User').filter(
        ({ schema, row }) => schema === USER_SCHEMA && row.multiValued && row.mutability !== 'readOnly',
      )) {
        const patched = patchResource(
          user,
          [{ op: 'add', path: row.path, value: { value: 'one' } }],
          USER_RESOURCE,
        );
        expect(patched[row.path], row.path).to.deep.equal([{ value: 'one' }]);
      }
    });

    it('keeps the attributes returned always whatever is asked for', () => {
      const user = userView(fullUser(), state(userFields(fullUser())), BASE);
      const always = rowsOf('User').filter(({ row }) => row.returned === 'always');
      expect(always.map(({ row }) => row.path)).to.deep.equal(['id']);
      expect(Object.keys(project(user, 'userName'))).to.have.members(['schemas', 'id', 'userName']);
      expect(project(user, undefined, 'id,userName')).to.have.property('id', user['id']);
    });
  });

  describe('names', () => {
    it('finds a name as spelled, else the first equal to it ignoring case, never through the prototype', () => {
      const object = { userName: 'a', USERNAME: 'b', Emails: [] };
      expect(keyOf(object, 'USERNAME')).to.equal('USERNAME');
      expect(keyOf(object, 'username')).to.equal('userName');
      expect(memberOf<unknown>(object, 'emails')).to.deep.equal([]);
      expect(memberOf<unknown>(object, 'constructor')).to.equal(undefined);
      expect(findNamed(['Id', 'id'], 'id', (n) => n)).to.equal('id');
      expect(findNamed(['Id'], 'ID', (n) => n)).to.equal('Id');
    });
  });
});
