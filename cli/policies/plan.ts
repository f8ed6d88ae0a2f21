import { policyNameKey } from '../../src/policies/model.js';
import { wireBody, type PolicyApi, type SimulationOutput } from './api.js';
import { diffPolicies, type Change, type DiffOptions } from './diff.js';
import type { PolicyFolder } from './folder.js';

/**
 * A plan: the changes a folder makes to the live policies (./diff.ts), each with its blast radius
 * as the service simulates it (docs/api.md §5.5): the principals that would gain access and those
 * that would lose it, on every resource the policy names. A creation is simulated as a new policy
 * (`POST /v1/policies/simulate`), an update and a deletion on the live policy
 * (`POST /v1/policies/{id}/simulate`). Each change is simulated alone, against the live policies
 * as they are, and nothing is written: a plan needs `policies:read` only.
 */

/** Who gains and who loses access, and where: the simulation's answer. */
export interface BlastRadius {
  /** Principals that would gain an action somewhere, by id. */
  gaining: string[];
  /** Principals that would lose an action somewhere, by id. */
  losing: string[];
  summary: SimulationOutput['summary'];
  access_changes: NonNullable<SimulationOutput['access_changes']>;
  /** More access changes than the service lists (10,000); the summary counts them all. */
  truncated?: true;
}

/** A change and its blast radius. */
export type PlannedChange = Change & { blast_radius: BlastRadius };

export interface Plan {
  dir: string;
  changes: PlannedChange[];
}

export type PlanOptions = DiffOptions;

/** The plan of a folder against the live policies. */
export async function makePlan(
  folder: PolicyFolder,
  api: PolicyApi,
  options: PlanOptions = {},
): Promise<Plan> {
  const live = await api.list();
  const changes = diffPolicies(folder.policies, live, options);
  if (options.only !== undefined && changes.length === 0) {
    const key = policyNameKey(options.only);
    const known =
      folder.policies.some((p) => policyNameKey(p.name) === key) ||
      (options.prune === true && live.some((p) => policyNameKey(p.name) === key));
    if (!known) throw new Error(`--only ${options.only}: no policy of that name in ${folder.dir}`);
  }
  const planned: PlannedChange[] = [];
  for (const change of changes) {
    const about = change.action === 'delete' ? change.name : `${change.name} (${change.file})`;
    try {
      const simulated =
        change.action === 'create'
          ? await api.simulateNew({ policy: wireBody(change.body) })
          : change.action === 'update'
            ? await api.simulate(change.live.id, { policy: wireBody(change.body) })
            : await api.simulate(change.live.id, { delete: true });
      planned.push({ ...change, blast_radius: radius(simulated) });
    } catch (err) {
      throw new Error(`${about}: the simulation failed: ${(err as Error).message}`, { cause: err });
    }
  }
  return { dir: folder.dir, changes: planned };
}

function radius(result: SimulationOutput): BlastRadius {
  const changes = result.access_changes ?? [];
  const ids = (pick: (c: (typeof changes)[number]) => boolean): string[] => [
    ...new Set(changes.filter(pick).map((c) => c.principal_id)),
  ];
  return {
    gaining: ids((c) => c.gained.length > 0),
    losing: ids((c) => c.lost.length > 0),
    summary: result.summary,
    access_changes: changes,
    ...(result.truncated ? { truncated: true as const } : {}),
  };
}

/** The plan as `--json` prints it: one object per change, `[]` when nothing differs. */
export function planJson(plan: Plan): unknown[] {
  return plan.changes.map((c) => ({
    action: c.action,
    name: c.name,
    ...(c.action === 'delete' ? {} : { file: c.file }),
    policy_id: c.action === 'create' ? null : c.live.id,
    version: c.action === 'create' ? null : c.live.version,
    ...(c.action === 'update' ? { fields: c.fields } : {}),
    ...(c.action === 'delete' ? {} : { body: c.body }),
    blast_radius: c.blast_radius,
  }));
}

/** Access changes shown per change in the text of a plan; `--json` lists them all. */
const SHOWN_ACCESS_CHANGES = 20;

const MARK = { create: '+', update: '~', delete: '-' } as const;

/** The plan as text, for a person to read before it is applied. */
export function planText(plan: Plan): string {
  const count = (action: Change['action']): number => plan.changes.filter((c) => c.action === action).length;
  if (plan.changes.length === 0)
    return `${plan.dir}: no changes: the live policies are what the folder says.\n`;
  const lines = [
    `${plan.dir}: ${count('create')} to create, ${count('update')} to update, ${count('delete')} to delete`,
  ];
  for (const c of plan.changes) {
    lines.push('');
    const where =
      c.action === 'create'
        ? `(${c.file})`
        : c.action === 'update'
          ? `(${c.live.id}, version ${c.live.version}, ${c.file})`
          : `(${c.live.id}, version ${c.live.version}: not in the folder)`;
    lines.push(`${MARK[c.action]} ${c.action} ${c.name} ${where}`);
    if (c.action === 'update') {
      for (const f of c.fields)
        lines.push(`    ${f.field}: ${JSON.stringify(f.from)} → ${JSON.stringify(f.to)}`);
    }
    lines.push(...radiusText(c));
  }
  return `${lines.join('\n')}\n`;
}

function radiusText(c: PlannedChange): string[] {
  const r = c.blast_radius;
  const principals = (n: number): string => `${n} principal${n === 1 ? '' : 's'}`;
  const lines = [
    `    blast radius: ${principals(r.gaining.length)} would gain access, ${principals(r.losing.length)} would lose access`,
  ];
  for (const a of r.access_changes.slice(0, SHOWN_ACCESS_CHANGES)) {
    const resource = `${a.resource.type}:${a.resource.identifier}${a.resource.pattern ? ' (pattern)' : ''}`;
    const parts = [
      ...(a.gained.length > 0 ? [`gains ${a.gained.join(', ')}`] : []),
      ...(a.lost.length > 0 ? [`loses ${a.lost.join(', ')}`] : []),
    ];
    lines.push(`      ${a.principal.name} (${a.principal_id}) ${parts.join(' and ')} on ${resource}`);
  }
  const more = r.summary.changed - Math.min(r.access_changes.length, SHOWN_ACCESS_CHANGES);
  if (more > 0)
    lines.push(`      … and ${more} more (--json lists ${r.truncated ? 'the first 10,000' : 'them all'})`);
  return lines;
}
