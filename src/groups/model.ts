/**
 * The unique key behind "names are unique per source": among API groups, and among the groups
 * of one connector (by its id, so that a connector reusing a deleted one's name starts afresh),
 * compared without case and surrounding space.
 */
export function groupNameKey(name: string, connectorRef: string | null): string {
  const key = name.trim().toLowerCase();
  return connectorRef === null ? `api:${key}` : `connector:${connectorRef}:${key}`;
}
