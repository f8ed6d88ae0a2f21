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

/**
 * Inserts generated text at each block-comment marker of a catalogue template (at every
 * occurrence, since a query may repeat a clause in several subqueries). A marker sits where the
 * template stays valid Cypher without its insertion, so the catalogue's EXPLAIN check covers it.
 * Insertions follow the same rule as `composeQuery`: fixed text and whitelisted identifiers only.
 */
export function fillMarkers(template: string, insertions: Readonly<Record<string, string>>): string {
  let text = template;
  for (const [marker, insertion] of Object.entries(insertions)) {
    if (!text.includes(marker)) throw new Error(`query template lacks the marker ${marker}`);
    text = text.split(marker).join(insertion);
  }
  return text;
}

/**
 * The text between the BEGIN and END block-comment markers of a catalogue query: a piece of
 * Cypher that other templates share (inserted with `fillMarkers`), kept in a file that is a
 * statement of its own so that the catalogue's EXPLAIN check covers it.
 */
export function fragmentOf(text: string, begin = '/*BEGIN*/', end = '/*END*/'): string {
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from || text.indexOf(begin, from + 1) >= 0 || text.indexOf(end, to + 1) >= 0) {
    throw new Error(`query text must contain ${begin} ... ${end} exactly once`);
  }
  return text.slice(from + begin.length, to).trim();
}
