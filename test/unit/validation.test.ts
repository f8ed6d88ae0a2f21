import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import { bodyAjv, compile, queryAjv, toFieldErrors } from '../../src/http/validation.js';

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
  const check = compile(bodyAjv, schema);

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

  it('prefixes query parameters with /query and coerces their types', () => {
    const q = compile<{ limit?: number }>(
      queryAjv,
      Type.Object({ limit: Type.Optional(Type.Integer({ maximum: 100 })) }),
    );
    const ok: Record<string, unknown> = { limit: '20' };
    expect(q(ok)).to.equal(true);
    expect(ok['limit']).to.equal(20);
    expect(q({ limit: '101' })).to.equal(false);
    expect(toFieldErrors(q.errors, '/query')[0]!.pointer).to.equal('/query/limit');
  });
});
