import { ATTRIBUTE_TABLE } from './attributes.js';
import { keyOf, sameName } from './names.js';
import { isObject, type ScimObject } from './resource.js';

/**
 * Members every returned resource keeps: `schemas`, and the attributes the table says are
 * `returned: always` (`id`).
 */
const ALWAYS = new Set([
  'schemas',
  ...ATTRIBUTE_TABLE.flatMap((t) => t.rows.filter((r) => r.returned === 'always').map((r) => r.path)),
]);

interface Selector {
  top: string;
  sub: string | undefined;
}

/**
 * The names of an `attributes` list, split at the commas outside quotes and brackets. A value
 * filter some clients put after a name (`emails[type eq "work"]`, `emails[type eq "work"].value`),
 * which RFC 7644 does not define there, is read as the attribute it qualifies.
 */
function names(list: string): string[] {
  const out: string[] = [];
  let current = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    if (quoted) {
      if (c === '\\') i += 1;
      else if (c === '"') quoted = false;
    } else if (c === '"' && depth > 0) quoted = true;
    else if (c === '[') depth += 1;
    else if (c === ']') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) {
      out.push(current);
      current = '';
    } else if (depth === 0) current += c;
  }
  out.push(current);
  return out.map((s) => s.trim()).filter(Boolean);
}

/** `name.givenName`, `urn:…:User:department`, `emails` → the member they name and its part. */
function selectors(list: string | undefined, resource: ScimObject): Selector[] {
  if (!list) return [];
  const urns = Object.keys(resource).filter((k) => k.startsWith('urn:'));
  return names(list).map((s) => {
    const urn = urns.find((u) => s.length > u.length && sameName(s.slice(0, u.length + 1), `${u}:`));
    if (urn) return { top: urn, sub: s.slice(urn.length + 1) };
    if (urns.some((u) => sameName(u, s))) return { top: s, sub: undefined };
    const schemaPrefix = /^urn:.*:([^:]+)$/.exec(s);
    const path = schemaPrefix ? schemaPrefix[1]! : s;
    const [top, sub] = path.split('.', 2) as [string, string | undefined];
    return { top, sub };
  });
}

function pick(value: unknown, sub: string): unknown {
  if (Array.isArray(value)) return value.map((v: unknown) => (isObject(v) ? pick(v, sub) : v));
  if (!isObject(value)) return undefined;
  const k = keyOf(value, sub.split('.')[0]!);
  return k === undefined ? {} : { [k]: value[k] };
}

/**
 * `attributes` / `excludedAttributes` (RFC 7644 §3.4.2.5): the members asked for, or all but
 * those excluded; `id` and `schemas` always stay. Names are matched regardless of case.
 */
export function project(resource: ScimObject, attributes?: string, excluded?: string): ScimObject {
  const wanted = selectors(attributes, resource);
  if (wanted.length > 0) {
    const out: ScimObject = {};
    for (const [k, v] of Object.entries(resource)) if (ALWAYS.has(k)) out[k] = v;
    for (const { top, sub } of wanted) {
      const key = keyOf(resource, top);
      if (key === undefined || ALWAYS.has(key)) continue;
      if (sub === undefined) out[key] = resource[key]!;
      else {
        const part = pick(resource[key], sub);
        if (part === undefined) continue;
        const previous = out[key];
        out[key] = isObject(previous) && isObject(part) ? { ...previous, ...part } : (part as ScimObject);
      }
    }
    return out;
  }
  const dropped = selectors(excluded, resource);
  if (dropped.length === 0) return resource;
  const out: ScimObject = { ...resource };
  for (const { top, sub } of dropped) {
    const key = keyOf(out, top);
    if (key === undefined || ALWAYS.has(key)) continue;
    if (sub === undefined) delete out[key];
    else if (isObject(out[key])) {
      const inner = { ...out[key] };
      const subKey = keyOf(inner, sub);
      if (subKey !== undefined) delete inner[subKey];
      out[key] = inner;
    }
  }
  return out;
}
