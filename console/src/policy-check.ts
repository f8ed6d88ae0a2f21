/**
 * What the console can say of an edited policy before sending it (docs/api.md §5.1): JSON syntax with
 * the place of an error, and the shape of the body. The service checks the rest.
 */

/** The fields of a policy a client writes (docs/api.md §5.1); the rest the service owns. */
export const WRITABLE = [
  'name',
  'description',
  'effect',
  'subjects',
  'actions',
  'resources',
  'conditions',
  'status',
  'valid_from',
  'valid_until',
] as const;
const REQUIRED = ['name', 'effect', 'subjects', 'actions', 'resources'] as const;

export interface Checked {
  body?: Record<string, unknown>;
  problems: string[];
}

/** Where in the text a JSON syntax error is, as line and column, from the parser's message. */
export function locate(text: string, message: string): string {
  const position = /position (\d+)/.exec(message);
  if (position) {
    const before = text.slice(0, Number(position[1]));
    const line = before.split('\n').length;
    return `line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
  }
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  return lineColumn ? `line ${lineColumn[1]}, column ${lineColumn[2]}` : '';
}

/**
 * What can be said of the edited policy before sending it: JSON syntax and the shape of the
 * body. The service checks the rest (operators, globs, CIDRs) and answers with pointers.
 */
export function checkPolicyText(text: string): Checked {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const where = locate(text, message);
    return { problems: [`Not valid JSON${where ? ` (${where})` : ''}: ${message}`] };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { problems: ['The policy must be a JSON object.'] };
  }
  const body = parsed as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of REQUIRED) if (!(key in body)) problems.push(`/${key} is required.`);
  for (const key of Object.keys(body)) {
    if (!(WRITABLE as readonly string[]).includes(key))
      problems.push(`/${key} is not a policy field a client writes.`);
  }
  if ('effect' in body && body['effect'] !== 'allow' && body['effect'] !== 'deny') {
    problems.push('/effect must be "allow" or "deny".');
  }
  if (
    'actions' in body &&
    (!Array.isArray(body['actions']) || body['actions'].some((a) => typeof a !== 'string'))
  ) {
    problems.push('/actions must be a list of action names.');
  }
  if ('resources' in body) {
    const resources = body['resources'];
    if (
      !Array.isArray(resources) ||
      resources.some(
        (r: unknown) =>
          r === null ||
          typeof r !== 'object' ||
          typeof (r as Record<string, unknown>)['type'] !== 'string' ||
          typeof (r as Record<string, unknown>)['identifier'] !== 'string',
      )
    ) {
      problems.push('/resources must be a list of { "type", "identifier" }.');
    }
  }
  if ('subjects' in body && (body['subjects'] === null || typeof body['subjects'] !== 'object')) {
    problems.push('/subjects must be an object with principals, groups or match.');
  }
  return problems.length > 0 ? { problems } : { body, problems };
}
