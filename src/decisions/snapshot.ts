import { SectionReader, SectionsRefused, SectionWriter } from '../columnar/sections.js';
import type { FeedPosition } from '../events/feed.js';
import { PolicyIndex } from './policy-index.js';

/**
 * The decision index in a file: its tables as they are in memory (principals, groups, memberships,
 * resources, the sets of `match` queries), its policies and delegations, each section with its
 * CRC-32, and what says where it stands: the database it was built from and the place in the
 * change feed up to which every change is in it. A start reads it back instead of building the
 * index from the database, then catches up from the feed (src/decisions/sync.ts).
 */

/** Bumped whenever the layout of the tables changes: a file of another format is not read. */
export const SNAPSHOT_FORMAT = 3;

export interface SnapshotMeta {
  format: number;
  /** The database the index was built from, as `decisionRepository.databaseId` names it. */
  database: string;
  /** Every change up to these places of the feed (shard, number) is in the index. */
  feed: FeedPosition[];
  /** Some principals' privilege risk factors were still to be brought up to date. */
  privilegesPending: boolean;
  writtenAt: string;
  principals: number;
  policies: number;
}

/** Writes the index; the caller keeps it from changing until this settles. Answers the bytes written. */
export async function writeSnapshot(
  index: PolicyIndex,
  file: string,
  where: { database: string; feed: readonly FeedPosition[]; privilegesPending: boolean },
): Promise<number> {
  const out = new SectionWriter();
  index.save(out);
  const meta: SnapshotMeta = {
    format: SNAPSHOT_FORMAT,
    database: where.database,
    feed: [...where.feed],
    privilegesPending: where.privilegesPending,
    writtenAt: new Date().toISOString(),
    principals: index.principals.size,
    policies: index.policies.size,
  };
  return out.write(file, meta);
}

/**
 * Reads an index back, refusing (`SectionsRefused`, with the reason) a file that is missing,
 * damaged, of another format or from another database.
 */
export async function readSnapshot(
  file: string,
  database: string,
): Promise<{ index: PolicyIndex; meta: SnapshotMeta }> {
  const sections = await SectionReader.read(file);
  const meta = sections.meta as Partial<SnapshotMeta> | null;
  if (meta?.format !== SNAPSHOT_FORMAT)
    throw new SectionsRefused(`it is of format ${String(meta?.format)}, not ${SNAPSHOT_FORMAT}`);
  if (meta.database !== database) throw new SectionsRefused('it was built from another database');
  if (!Array.isArray(meta.feed)) throw new SectionsRefused('it names no place in the change feed');
  try {
    return { index: PolicyIndex.restore(sections), meta: meta as SnapshotMeta };
  } catch (err) {
    if (err instanceof SectionsRefused) throw err;
    throw new SectionsRefused(`its contents do not read back: ${(err as Error).message}`);
  }
}

export { SectionsRefused };
