import type { Database } from '../../src/db/database.js';
import { resourceOf } from '../../src/policies/model.js';
import { cypher } from './db.js';

/**
 * The rows of the reports about principals as the graph gives them: the statements that made
 * them page by page from Neo4j before they were read from the decision index, kept here as the
 * reference the index-made rows are held to, run over the whole graph in one page, and finished
 * as the report sources finished them (risk factor codes, days inactive, delegated resources as
 * the API writes them). The members of each delegation a principal holds are put in the order
 * docs/api.md lists them: Neo4j returns those of a map in an order of its own.
 */

const INVENTORY = `
MATCH (p:Principal)
WHERE p.id > $after
WITH p
ORDER BY p.id
LIMIT $limit
OPTIONAL MATCH (p)-[:REPORTS_TO]->(m:Principal)
WITH p, m
ORDER BY p.id
RETURN count(p) AS scanned, last(collect(p.id)) AS last, collect({
  id: p.id, type: p.type, name: p.name, email: p.email, status: p.status,
  connector_source: p.connector_source, owner: p.\`meta.owner\`, manager_id: m.id,
  groups: COUNT { (p)-[:MEMBER_OF]->(:Group) }, risk_score: p.risk_score,
  risk_factors: p.risk_factors, last_login: p.last_login, created_at: p.created_at,
  updated_at: p.updated_at
}) AS rows`;

const DORMANT = `
MATCH (p:Principal)
WHERE p.id > $after AND p.status IN ['active', 'suspended']
WITH p
ORDER BY p.id
LIMIT $limit
WITH collect(p) AS page
RETURN size(page) AS scanned, last(page).id AS last, [p IN page
  WHERE coalesce(p.last_login, p.created_at) < datetime($before) | {
    id: p.id, type: p.type, name: p.name, email: p.email, status: p.status,
    connector_source: p.connector_source, owner: p.\`meta.owner\`, last_login: p.last_login,
    created_at: p.created_at, risk_score: p.risk_score
  }] AS rows`;

const ORPHANED = `
MATCH (p:Principal)
WHERE p.id > $after AND p.type <> 'USER' AND p.status IN ['active', 'suspended']
WITH p
ORDER BY p.id
LIMIT $limit
WITH p, p.\`meta.owner\` AS ref
CALL (p, ref) {
  OPTIONAL MATCH (byId:Principal {id: ref})
  WITH byId
  RETURN coalesce(byId, head(COLLECT {
    MATCH (u:Principal {email: ref})
    WHERE u.type = 'USER'
    RETURN u ORDER BY CASE u.status WHEN 'active' THEN 0 WHEN 'suspended' THEN 1 ELSE 2 END, u.id
  })) AS owner
}
WITH p, ref, owner, CASE WHEN ref IS NULL THEN 'unset' WHEN owner IS NULL THEN 'missing' ELSE owner.status END AS state
WITH p, ref, owner, state, COLLECT {
  MATCH (a:Principal)-[d:DELEGATES_TO]->(p)
  WHERE d.status = 'active' AND d.expires_at > datetime($now)
  WITH a, d
  ORDER BY d.expires_at, d.id
  RETURN {
    delegation_id: d.id, delegator_id: a.id, delegator_name: a.name, delegator_status: a.status,
    actions: d.actions, resources: d.resources, expires_at: d.expires_at
  }
} AS held
WITH p, ref, owner, state, held, p.type = 'AI_AGENT' AND (
  any(h IN held WHERE h.delegator_status <> 'active')
  OR (size(held) > 0 AND state IN ['missing', 'deprovisioned', 'deleted'])
) AS delegationOrphaned
ORDER BY p.id
WITH count(p) AS scanned, last(collect(p.id)) AS last,
  collect({p: p, ref: ref, owner: owner, state: state, held: held, orphaned: delegationOrphaned}) AS page
RETURN scanned, last, [x IN page WHERE x.state IN ['unset', 'missing', 'deprovisioned', 'deleted'] OR x.orphaned | {
  id: x.p.id, type: x.p.type, name: x.p.name, status: x.p.status, owner: x.ref,
  owner_state: x.state, owner_id: x.owner.id, owner_name: x.owner.name,
  risk_score: x.p.risk_score, created_at: x.p.created_at,
  delegation_orphaned: x.orphaned, acts_for: x.held
}] AS rows`;

type Row = Record<string, unknown>;

/** What a reference statement answers: how many principals it read, and the report's rows. */
export interface ReferenceRows {
  scanned: number;
  rows: Row[];
}

async function everything(db: Database, statement: string, params: Row): Promise<ReferenceRows> {
  const [page] = await cypher(db, statement, { ...params, after: '', limit: 1_000_000 });
  return { scanned: page!['scanned'] as number, rows: page!['rows'] as Row[] };
}

const riskCodes = (factors: unknown): string[] =>
  typeof factors === 'string' ? (JSON.parse(factors) as { code: string }[]).map((f) => f.code) : [];

/** The rows of `principal_inventory`, as the graph has them now. */
export async function inventoryReference(db: Database): Promise<ReferenceRows> {
  const page = await everything(db, INVENTORY, {});
  return { ...page, rows: page.rows.map((r) => ({ ...r, risk_factors: riskCodes(r['risk_factors']) })) };
}

/** The rows of `dormant_principals` of the parameters a report was given. */
export async function dormantReference(
  db: Database,
  parameters: { as_of: string; days: number },
): Promise<ReferenceRows> {
  const asOf = Date.parse(parameters.as_of);
  const before = new Date(asOf - parameters.days * 86_400_000).toISOString();
  const page = await everything(db, DORMANT, { before });
  return {
    ...page,
    rows: page.rows.map((r) => ({
      ...r,
      days_inactive: Math.floor((asOf - Date.parse(String(r['last_login'] ?? r['created_at']))) / 86_400_000),
    })),
  };
}

/** The rows of `orphaned_principals` at `now`. */
export async function orphanedReference(db: Database, now: string): Promise<ReferenceRows> {
  const page = await everything(db, ORPHANED, { now });
  return {
    ...page,
    rows: page.rows.map((r) => ({
      ...r,
      acts_for: (r['acts_for'] as Row[]).map((h) => ({
        delegation_id: h['delegation_id'],
        delegator_id: h['delegator_id'],
        delegator_name: h['delegator_name'],
        delegator_status: h['delegator_status'],
        actions: h['actions'],
        resources: h['resources'] ? (h['resources'] as string[]).map(resourceOf) : null,
        expires_at: h['expires_at'],
      })),
    })),
  };
}
