import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { projectRoot } from '../paths.js';

export function defaultCypherDir(): string {
  return path.join(projectRoot(), 'cypher');
}

/**
 * Queries a module needs, declared where they are used. The catalogue checks at boot that each
 * declared name has its file, so a missing query stops the service at start, not on first use.
 */
const required = new Set<string>();

export function defineQueries<const N extends readonly string[]>(
  folder: string,
  names: N,
): { [K in N[number]]: string } {
  const out: Record<string, string> = {};
  for (const name of names) {
    const full = `${folder}/${name}`;
    required.add(full);
    out[name] = full;
  }
  return out as { [K in N[number]]: string };
}

export function requiredQueryNames(): string[] {
  return [...required].sort();
}

export class CatalogueError extends Error {
  override name = 'CatalogueError';
}

/** Every named query of `cypher/` (except schema migrations), one query per `.cypher` file. */
export class Catalogue {
  private constructor(private readonly queries: ReadonlyMap<string, string>) {}

  static async load(
    dir: string = defaultCypherDir(),
    required: string[] = requiredQueryNames(),
  ): Promise<Catalogue> {
    const queries = new Map<string, string>();
    const walk = async (rel: string): Promise<void> => {
      const entries = await readdir(path.join(dir, rel), { withFileTypes: true });
      for (const entry of entries) {
        const relPath = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (relPath !== 'schema') await walk(relPath);
        } else if (entry.name.endsWith('.cypher')) {
          const text = stripComments(await readFile(path.join(dir, relPath), 'utf8'));
          const name = relPath.slice(0, -'.cypher'.length);
          if (text.length === 0) throw new CatalogueError(`cypher/${relPath} is empty`);
          if (/;\s*\S/.test(text))
            throw new CatalogueError(`cypher/${relPath} holds more than one statement`);
          queries.set(name, text.replace(/;\s*$/, ''));
        }
      }
    };
    await walk('');
    const missing = required.filter((n) => !queries.has(n));
    if (missing.length > 0) {
      throw new CatalogueError(
        `missing Cypher files: ${missing.map((n) => `cypher/${n}.cypher`).join(', ')}`,
      );
    }
    return new Catalogue(queries);
  }

  get(name: string): string {
    const text = this.queries.get(name);
    if (text === undefined) throw new CatalogueError(`unknown query ${name}`);
    return text;
  }

  names(): string[] {
    return [...this.queries.keys()].sort();
  }
}

/** Removes `//` line comments (outside string literals) and surrounding blank space. */
export function stripComments(text: string): string {
  const lines = text.split('\n').map((line) => {
    let quote: string | null = null;
    for (let i = 0; i < line.length; i += 1) {
      const ch = line[i];
      if (quote) {
        if (ch === '\\') i += 1;
        else if (ch === quote) quote = null;
      } else if (ch === "'" || ch === '"' || ch === '`') {
        quote = ch;
      } else if (ch === '/' && line[i + 1] === '/') {
        return line.slice(0, i).trimEnd();
      }
    }
    return line.trimEnd();
  });
  return lines
    .filter((l) => l.trim() !== '')
    .join('\n')
    .trim();
}
