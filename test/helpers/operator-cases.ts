import type { ConditionInput, Tri } from '../../src/policies/conditions.js';
import { OPERATORS, isAvailable, operatorRow, type Operator } from '../../src/operators/table.js';
import type { Subject } from '../../src/principals/search/evaluate.js';
import {
  attribute,
  condition,
  field,
  type Condition,
  type Operand,
} from '../../src/principals/search/model.js';
import { instantKey, parseInstant } from '../../src/time.js';
import { loadCases } from './cases.js';

/**
 * The operator cases of test/cases/operators/*.yaml: one file per operator, each case an operand, a
 * stored value (the key left out when the value is missing) and what the evaluators answer.
 *
 * - `condition` (true, false or unknown) is the policy condition `{ "context.v": { <op>: <operand> } }`
 *   on a request whose context holds the stored value as `v`.
 * - `search` (true or false) is the query condition on the principal holding the stored value: in
 *   its attribute `v`, or in the principal field `field` names. The in-memory evaluator and the
 *   Cypher of the search statements must both answer it.
 * - A case gives both when both can say it, and then they agree: condition true ⇔ search true,
 *   condition false ⇔ search false; an unknown condition says nothing about the search. A case
 *   leaves `search` out when no principal can hold its value (booleans, objects, numbers outside
 *   the score), and `condition` out when conditions cannot read it alike (instants compare as
 *   instants only in timestamp fields of a search).
 */

/** Principal fields a case may store its value in, instead of the attribute `v`. */
export const CASE_FIELDS = ['name', 'email', 'risk_score', 'last_login'] as const;
export type CaseField = (typeof CASE_FIELDS)[number];

export interface OperatorCase {
  name: string;
  operand: unknown;
  stored?: unknown;
  field?: CaseField;
  condition?: boolean | 'unknown';
  search?: boolean;
}

export interface OperatorCaseFile {
  operator: Operator;
  cases: OperatorCase[];
}

const SCHEMA = {
  type: 'object',
  required: ['operator', 'cases'],
  additionalProperties: false,
  properties: {
    operator: { type: 'string', enum: [...OPERATORS] },
    cases: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['name', 'operand'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1 },
          operand: {},
          stored: {},
          field: { type: 'string', enum: [...CASE_FIELDS] },
          condition: { enum: [true, false, 'unknown'] },
          search: { type: 'boolean' },
        },
      },
    },
  },
};

/** One case with its operator and where it was written, for messages. */
export interface LoadedCase extends OperatorCase {
  operator: Operator;
  where: string;
}

/**
 * The cases, checked beyond the schema: no case expects what its operator's row says it has no
 * form for, and a search case stores only what its target can hold.
 */
export function operatorCases(): { files: OperatorCaseFile[]; cases: LoadedCase[] } {
  const loaded = loadCases<OperatorCaseFile>('operators', SCHEMA);
  const cases: LoadedCase[] = [];
  for (const { file, content } of loaded) {
    const row = operatorRow(content.operator);
    content.cases.forEach((c, i) => {
      const where = `${file} #${i + 1} (${c.name})`;
      if (c.condition === undefined && c.search === undefined) throw new Error(`${where} expects nothing`);
      if (c.condition !== undefined && !isAvailable(row.condition))
        throw new Error(`${where}: ${content.operator} has no condition form`);
      if (c.search !== undefined && (!isAvailable(row.search) || !isAvailable(row.cypher)))
        throw new Error(`${where}: ${content.operator} has no search form`);
      if (c.search !== undefined && !storable(c))
        throw new Error(`${where}: no principal holds that value there`);
      cases.push({ ...c, operator: content.operator, where });
    });
  }
  return { files: loaded.map((l) => l.content), cases };
}

const isText = (v: unknown): v is string => typeof v === 'string';

/** Whether a principal can hold the case's stored value where the case puts it. */
function storable(c: OperatorCase): boolean {
  const missing = !('stored' in c) || c.stored === null;
  switch (c.field) {
    case undefined:
      return (
        missing ||
        isText(c.stored) ||
        (Array.isArray(c.stored) && c.stored.length > 0 && c.stored.every(isText))
      );
    case 'name':
      return isText(c.stored);
    case 'email':
      return missing || isText(c.stored);
    case 'risk_score':
      return Number.isInteger(c.stored) && (c.stored as number) >= 0 && (c.stored as number) <= 100;
    case 'last_login':
      return missing || (isText(c.stored) && parseInstant(c.stored) !== undefined);
  }
}

/** The stored value, null when missing. */
export const storedOf = (c: OperatorCase): unknown => ('stored' in c ? (c.stored ?? null) : null);

export const expectedTri = (c: OperatorCase): Tri | undefined =>
  c.condition === undefined ? undefined : (String(c.condition) as Tri);

/** The policy condition of a case: its operator on `context.v`. */
export const conditionsOf = (c: LoadedCase): Record<string, unknown> => ({
  'context.v': { [c.operator]: c.operand },
});

/** A request whose context holds the case's stored value as `v` (no `v` when missing). */
export function conditionInputOf(c: OperatorCase): ConditionInput {
  return {
    principal: {
      id: 'prn_case',
      type: 'USER',
      status: 'active',
      name: 'case',
      email: null,
      connector_source: null,
      connector_id: null,
      risk_score: 0,
      attributes: {},
      metadata: {},
    },
    resource: { type: 'document', identifier: 'doc-1', attributes: {} },
    context: 'stored' in c ? { v: c.stored } : {},
  };
}

/** The query condition of a case. */
export const queryOf = (c: LoadedCase): Condition =>
  condition(c.field ? field(c.field) : attribute('v'), c.operator as Condition['op'], c.operand as Operand);

/** A principal holding the case's stored value, as the in-memory evaluator reads principals. */
export function subjectOf(c: OperatorCase): Subject {
  const stored = storedOf(c);
  const created = instantKey('2026-01-01T00:00:00Z')!;
  const base: Subject = {
    type: 'SERVICE_ACCOUNT',
    status: 'active',
    name: 'case',
    email: null,
    connector_source: null,
    created_at: created,
    updated_at: created,
    last_login: null,
    risk_score: 0,
    attributes: {},
  };
  switch (c.field) {
    case undefined:
      return stored === null ? base : { ...base, attributes: { v: stored as string | string[] } };
    case 'name':
      return { ...base, name: stored as string };
    case 'email':
      return { ...base, email: stored as string | null };
    case 'risk_score':
      return { ...base, risk_score: stored as number };
    case 'last_login':
      return { ...base, last_login: stored === null ? null : instantKey(stored as string)! };
  }
}
