import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import {
  FREE_FORM_BOUNDS,
  FREE_FORM_KEYWORD,
  FreeForm,
  freeFormViolation,
} from '../../src/schemas/free-form.js';
import { compile, inputAjv, toFieldErrors } from '../../src/schemas/validator.js';

/** An object nested `levels` deep: `{"a":{"a":...{"a":"x"}}}`, the value itself being level 1. */
function nested(levels: number, leaf: unknown = 'x'): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value;
}

/** Arrays nested `levels` deep, built from text as a client would send them. */
function nestedArrays(levels: number): unknown {
  return JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`) as unknown;
}

const check = (value: unknown) => freeFormViolation(value, FREE_FORM_BOUNDS);
const pointerTo = (levels: number): string => '/a'.repeat(levels - 1);

describe('free-form bounds', () => {
  describe('nesting', () => {
    it('counts the value itself as level 1, so {"a":{"b":"x"}} has two levels', () => {
      expect(check({ a: { b: 'x' } })).to.equal(undefined);
      const tight = { ...FREE_FORM_BOUNDS, maxDepth: 1 };
      expect(freeFormViolation({ a: 'x' }, tight)).to.equal(undefined);
      expect(freeFormViolation({ a: { b: 'x' } }, tight)).to.deep.equal({
        pointer: '/a',
        message: 'is nested more than 1 levels deep',
      });
      expect(freeFormViolation('x', tight), 'a scalar has no levels').to.equal(undefined);
    });

    it('accepts 16 levels and points at the 17th', () => {
      expect(check(nested(16))).to.equal(undefined);
      expect(check(nested(16, []))).to.deep.equal({
        pointer: pointerTo(17),
        message: 'is nested more than 16 levels deep',
      });
      expect(check(nested(17))).to.deep.equal({
        pointer: pointerTo(17),
        message: 'is nested more than 16 levels deep',
      });
    });

    it('refuses 100,000 levels of objects or arrays without overflowing the stack', () => {
      expect(check(nested(100_000))).to.deep.equal({
        pointer: pointerTo(17),
        message: 'is nested more than 16 levels deep',
      });
      expect(check(nestedArrays(100_000))).to.deep.equal({
        pointer: '/0'.repeat(16),
        message: 'is nested more than 16 levels deep',
      });
    });
  });

  describe('keys and elements', () => {
    const spread = (total: number): Record<string, string[]> => {
      // Ten keys of arrays: 10 keys + (total - 10) elements.
      const value: Record<string, string[]> = {};
      for (let k = 0; k < 10; k += 1) value[`k${k}`] = [];
      for (let i = 0; i < total - 10; i += 1) value[`k${i % 10}`]!.push('v');
      return value;
    };

    it('counts every key and every element across the whole value, up to 1,000', () => {
      expect(check(spread(1000))).to.equal(undefined);
      expect(check(spread(1001))).to.deep.equal({
        pointer: '',
        message: 'has more than 1,000 keys and elements in all',
      });
      expect(check(new Array(1000).fill(0))).to.equal(undefined);
      expect(check(new Array(1001).fill(0))?.pointer).to.equal('');
      expect(check({ a: new Array(999).fill({}) }), 'empty objects add no keys').to.equal(undefined);
      expect(check({ a: new Array(999).fill({ b: 1 }) })?.message).to.match(/more than 1,000/);
    });
  });

  describe('strings', () => {
    it('accepts 4,096 characters and points at a longer string or key', () => {
      expect(check({ s: 'x'.repeat(4096), ['k'.repeat(4096)]: 1 })).to.equal(undefined);
      expect(check({ a: ['ok', 'x'.repeat(4097)] })).to.deep.equal({
        pointer: '/a/1',
        message: 'is longer than 4,096 characters',
      });
      const key = 'k'.repeat(4097);
      expect(check({ a: { [key]: 1 } })).to.deep.equal({
        pointer: `/a/${key}`,
        message: 'is a key longer than 4,096 characters',
      });
    });
  });

  describe('reserved keys', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      it(`refuses ${key} at any level, as JSON.parse makes it (an own key)`, () => {
        const top = JSON.parse(`{"${key}": "x"}`) as unknown;
        expect(Object.keys(top as object)).to.deep.equal([key]);
        expect(check(top)).to.deep.equal({ pointer: `/${key}`, message: 'is a reserved key' });
        const deep = JSON.parse(`{"a": [{"b": {"${key}": {}}}]}`) as unknown;
        expect(check(deep)).to.deep.equal({ pointer: `/a/0/b/${key}`, message: 'is a reserved key' });
      });
    }

    it('allows keys that merely contain them', () => {
      expect(check({ constructor_id: 1, my_prototype: 2, ___proto___: 3 })).to.equal(undefined);
    });

    it('in paths mode, also refuses them as segments of the top keys and of $ref operands', () => {
      const paths = { ...FREE_FORM_BOUNDS, paths: true };
      expect(freeFormViolation({ 'context.ip': { $eq: 'x' } }, paths)).to.equal(undefined);
      expect(freeFormViolation({ 'context.constructor': { $exists: true } }, paths)).to.deep.equal({
        pointer: '/context.constructor',
        message: 'names the reserved key constructor',
      });
      expect(
        freeFormViolation({ 'context.ip': { $eq: { $ref: 'principal.attributes.__proto__' } } }, paths),
      ).to.deep.equal({ pointer: '/context.ip/$eq/$ref', message: 'names the reserved key __proto__' });
      expect(
        freeFormViolation({ 'context.ip': { $eq: { $ref: 'principal.attributes.team' } } }, paths),
      ).to.equal(undefined);
      expect(
        freeFormViolation({ 'context.constructor': 1 }, FREE_FORM_BOUNDS),
        'only in paths mode',
      ).to.equal(undefined);
    });
  });

  describe('as a schema keyword', () => {
    const schema = Type.Object(
      {
        context: Type.Optional(
          FreeForm(Type.Record(Type.String(), Type.Unknown(), { description: 'Facts' })),
        ),
        items: Type.Optional(Type.Array(FreeForm(Type.Object({}, { additionalProperties: true })))),
      },
      { additionalProperties: false },
    );
    const validate = compile(inputAjv, schema);

    it('carries the bounds and says them in the description', () => {
      const context = schema.properties.context as unknown as Record<string, unknown>;
      expect(context[FREE_FORM_KEYWORD]).to.deep.include({ maxDepth: 16, maxEntries: 1000, maxLength: 4096 });
      expect(context['description']).to.match(/^Facts\. Bounded: at most 16 levels/);
    });

    it('points into the request at the offending place', () => {
      expect(validate({ context: nested(16) })).to.equal(true);
      expect(validate({ context: nested(100_000) })).to.equal(false);
      expect(toFieldErrors(validate.errors)).to.deep.equal([
        { pointer: `/context${pointerTo(17)}`, message: 'is nested more than 16 levels deep' },
      ]);
      expect(validate({ items: [{}, JSON.parse('{"x": {"__proto__": 1}}')] })).to.equal(false);
      expect(toFieldErrors(validate.errors)).to.deep.equal([
        { pointer: '/items/1/x/__proto__', message: 'is a reserved key' },
      ]);
      expect(validate({ context: { 'a/b~': 'x'.repeat(4097) } })).to.equal(false);
      expect(toFieldErrors(validate.errors)).to.deep.equal([
        { pointer: '/context/a~1b~0', message: 'is longer than 4,096 characters' },
      ]);
    });
  });
});
