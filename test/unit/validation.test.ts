import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import { readQuery } from '../../src/http/query.js';
import { compile, inputAjv, toFieldErrors } from '../../src/schemas/validator.js';

describe('validation errors as JSON Pointers', () => {
  const schema = Type.Object(
    {
      name: Type.String({ minLength: 1 }),
      attributes: Type.Optional(
        Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())])),
      ),
    },
    { additionalProperties: false },
  );
  const check = compile(inputAjv, schema);

  it('points at a missing required field', () => {
    expect(check({})).to.equal(false);
    expect(toFieldErrors(check.errors)).to.deep.equal([{ pointer: '/name', message: 'is required' }]);
  });

  it('points at an unknown field', () => {
    check({ name: 'x', id: 'prn_1' });
    expect(toFieldErrors(check.errors)).to.deep.equal([
      { pointer: '/id', message: 'is not an allowed field' },
    ]);
  });

  it('points into nested values and escapes pointer characters', () => {
    check({ name: 'x', attributes: { 'a/b': 5 } });
    const errors = toFieldErrors(check.errors);
    expect(errors.map((e) => e.pointer)).to.deep.equal(['/attributes/a~1b']);
  });

  it('reads query integers strictly and points at them under /query', () => {
    const schema = Type.Object({
      limit: Type.Optional(Type.Integer({ maximum: 100 })),
      flag: Type.Optional(Type.Boolean()),
    });
    expect(readQuery(schema, { limit: '20', flag: 'true', other: 'x' })).to.deep.equal({
      values: { limit: 20, flag: true },
      errors: [],
    });
    for (const bad of ['0x10', '1e1', '+2', ' 2', '2 ', '007', '1.0', '', 'ten']) {
      expect(readQuery(schema, { limit: bad }).errors, bad).to.deep.equal([
        { pointer: '/query/limit', message: 'must be an integer in decimal digits' },
      ]);
    }
    expect(readQuery(schema, { flag: '1' }).errors).to.deep.equal([
      { pointer: '/query/flag', message: 'must be true or false' },
    ]);
    expect(readQuery(schema, { limit: ['1', '2'] }).errors).to.deep.equal([
      { pointer: '/query/limit', message: 'must be given once' },
    ]);
    const q = compile(inputAjv, schema);
    expect(q(readQuery(schema, { limit: '101' }).values)).to.equal(false);
    expect(toFieldErrors(q.errors, '/query')[0]!.pointer).to.equal('/query/limit');
  });

  it('accepts only timestamps that name a real instant Neo4j can read', () => {
    const check = compile(inputAjv, Type.String({ format: 'date-time' }));
    for (const good of [
      '2026-12-31T23:59:59Z',
      '2026-01-01T00:00:00.123456789+02:00',
      '2024-02-29T00:00:00z',
    ]) {
      expect(check(good), good).to.equal(true);
    }
    for (const bad of [
      '2026-12-31T23:59:60Z',
      '2026-01-01T00:00:00.1234567890Z',
      '2026-01-01 00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01',
    ]) {
      expect(check(bad), bad).to.equal(false);
    }
  });
});
