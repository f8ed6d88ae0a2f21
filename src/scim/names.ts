/**
 * SCIM names attributes, sub-attributes, schema URNs and the members of its messages
 * (`Operations`, `op`, `path`) regardless of case (RFC 7643 §2.1, RFC 7644 §3.10). Every lookup
 * of such a name, in a client's JSON, in the attribute table or among the discovery documents,
 * goes through here, so that they all agree on what the same name is: the name as spelled when
 * it is there, else the first one equal to it ignoring case.
 */

/** Whether two names are the same name. */
export const sameName = (a: string, b: string): boolean => a === b || a.toLowerCase() === b.toLowerCase();

/** The own key of `object` that is `name`, if any. */
export function keyOf(object: object, name: string): string | undefined {
  if (Object.hasOwn(object, name)) return name;
  const lower = name.toLowerCase();
  return Object.keys(object).find((k) => k.toLowerCase() === lower);
}

/** The member of `object` named `name`, if any. */
export function memberOf<T>(object: Readonly<Record<string, T>> | undefined, name: string): T | undefined {
  if (object === undefined) return undefined;
  const key = keyOf(object, name);
  return key === undefined ? undefined : object[key];
}

/** The item of `items` whose name (`nameOf`) is `name`, if any. */
export function findNamed<T>(items: readonly T[], name: string, nameOf: (item: T) => unknown): T | undefined {
  const exact = items.find((item) => nameOf(item) === name);
  if (exact !== undefined) return exact;
  return items.find((item) => {
    const n = nameOf(item);
    return typeof n === 'string' && sameName(n, name);
  });
}
