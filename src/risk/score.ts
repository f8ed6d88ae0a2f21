import type { Principal, RiskFactor, RiskInput, RiskRule } from '../principals/model.js';

export const DORMANT_AFTER_DAYS = 90;
export const MANY_TOOLS = 20;

/** Capabilities that let an agent act beyond reading: each one raises its risk. */
const HIGH_RISK_CAPABILITIES = new Set([
  'code_execution',
  'shell',
  'admin',
  'write_access',
  'payments',
  'data_export',
]);

/** An attribute's values: an array as it is, a string as a list of one, nothing as empty. */
function valuesOf(attributes: Principal['attributes'], key: string): string[] {
  const value = attributes[key];
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
}

/**
 * The risk of a principal from what the graph knows about it, as points per factor; the score
 * is their sum, capped at 100. Pure: the same inputs and time give the same result.
 */
export function assessRisk(p: RiskInput, now: number = Date.now()): ReturnType<RiskRule> {
  const factors: RiskFactor[] = [];
  if (p.type !== 'USER') {
    if (!p.metadata['owner']) factors.push({ code: 'NO_OWNER', points: 30 });
    else if (p.owner_state) factors.push({ code: 'ORPHANED', points: 30 });
  }
  if (p.type === 'USER') {
    if (p.last_login === null) factors.push({ code: 'NEVER_LOGGED_IN', points: 10 });
    else if (now - Date.parse(p.last_login) > DORMANT_AFTER_DAYS * 86_400_000)
      factors.push({ code: 'DORMANT', points: 25 });
  }
  if (p.type === 'AI_AGENT') {
    const list = valuesOf(p.attributes, 'allowed_tools');
    if (list.includes('*')) factors.push({ code: 'BROAD_TOOL_ACCESS', points: 40 });
    else if (list.length > MANY_TOOLS) factors.push({ code: 'BROAD_TOOL_ACCESS', points: 25 });
    const risky = valuesOf(p.attributes, 'capabilities').filter((c) =>
      HIGH_RISK_CAPABILITIES.has(c.toLowerCase()),
    );
    if (risky.length > 0)
      factors.push({ code: 'HIGH_RISK_CAPABILITY', points: Math.min(30, 15 * risky.length) });
    // An agent still acting for someone who is gone, or whose own owner is gone: nobody living
    // answers for what it does under those delegations.
    if (p.delegation_state === 'orphaned' || (p.delegation_state === 'acting' && p.owner_state))
      factors.push({ code: 'DELEGATION_ORPHANED', points: 30 });
  }
  if (p.status === 'suspended') factors.push({ code: 'SUSPENDED', points: 10 });
  factors.push(...(p.privilege_factors ?? []));
  const score = Math.min(
    100,
    factors.reduce((sum, f) => sum + f.points, 0),
  );
  return { score, factors };
}
