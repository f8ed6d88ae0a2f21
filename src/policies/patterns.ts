/**
 * The two kinds of pattern a policy names: actions (`read`, `repo:*`, `*`) and resource
 * identifiers (`payments-prod-1`, `payments-prod-*`). Both are plain text with `*` as the only
 * wildcard, matching any run of characters (the empty one included).
 */

export function actionMatches(pattern: string, action: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return action.startsWith(pattern.slice(0, -1));
  return pattern === action;
}

/** Whether every action `specific` stands for is one `general` stands for. */
export function actionCovers(general: string, specific: string): boolean {
  if (general === '*') return true;
  if (general.endsWith('*')) return specific.startsWith(general.slice(0, -1));
  return general === specific;
}

export function isGlob(identifier: string): boolean {
  return identifier.includes('*');
}

/** A compiled identifier glob. */
export interface Glob {
  readonly pattern: string;
  /** The text before the first `*`: every match starts with it. */
  readonly prefix: string;
  /** The literal runs between the wildcards. */
  readonly parts: readonly string[];
}

export function compileGlob(pattern: string): Glob {
  const parts = pattern.split('*');
  return { pattern, prefix: parts[0]!, parts };
}

/** Whether `text` is one of the identifiers the glob stands for. */
export function globMatches(glob: Glob, text: string): boolean {
  const { parts } = glob;
  if (parts.length === 1) return text === parts[0];
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (text.length < first.length + last.length) return false;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < parts.length - 1; i += 1) {
    const part = parts[i]!;
    const found = text.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/**
 * Whether a glob's text stands for `text`, for many globs asked about the same identifier: each
 * glob compiled and matched once.
 */
export function globsMatching(text: string): (pattern: string) => boolean {
  const known = new Map<string, boolean>();
  return (pattern) => {
    let yes = known.get(pattern);
    if (yes === undefined) {
      yes = globMatches(compileGlob(pattern), text);
      known.set(pattern, yes);
    }
    return yes;
  };
}

/**
 * Whether every identifier `specific` (a glob or an exact identifier) stands for is one the glob
 * `general` stands for. `general` matching the text of `specific`, its wildcards read as the
 * character `*`, is enough: a literal run of `general` cannot contain `*`, so every wildcard of
 * `specific` falls within one of `general`'s, which matches whatever replaces it.
 */
export function globCovers(general: Glob, specific: string): boolean {
  return globMatches(general, specific);
}

/** Why an identifier pattern can never be meant as written, if it cannot. */
export function globProblem(pattern: string): string | undefined {
  if (pattern.includes('**'))
    return 'must not contain `**`: a single `*` already matches any run of characters';
  return undefined;
}
