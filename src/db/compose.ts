/**
 * Fills the marker of a catalogue query with generated predicates. Fragments must be built
 * only from fixed text and whitelisted identifiers; every value travels as a parameter.
 */
export function composeQuery(template: string, marker: string, fragments: readonly string[]): string {
  const at = template.indexOf(marker);
  if (at < 0 || template.indexOf(marker, at + marker.length) >= 0) {
    throw new Error(`query template must contain ${marker} exactly once`);
  }
  const text = fragments.map((f) => ` AND (${f})`).join('');
  return template.slice(0, at) + text + template.slice(at + marker.length);
}
