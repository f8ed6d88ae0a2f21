import { AppError } from '../errors/errors.js';
import { isId } from '../ids.js';
import { CONNECTOR_NAME_PATTERN } from '../schemas/connectors.js';

/** How a connector is read by id (ConnectorService.get: a NOT_FOUND error when there is none). */
export interface ConnectorLookup {
  get(id: string): Promise<{ name: string }>;
}

/** Connector ids whose names are remembered at most; the memory is emptied beyond. */
const REMEMBERED = 10_000;

const NAME = new RegExp(CONNECTOR_NAME_PATTERN);

/**
 * The connector a subject's `properties.connector` names, by name or by id, as the
 * `connector_source` its principals carry. A name is taken as it is (its principals say whether
 * it names a connector); an id is read once and remembered, since a connector never changes its
 * name, so that naming connectors by id costs a decision no database round trip after the first.
 */
export class ConnectorNames {
  /** Names by connector id; a lookup under way is shared by every request that needs it. */
  private readonly names = new Map<string, Promise<string | null>>();

  constructor(private readonly connectors: ConnectorLookup) {}

  /**
   * The `connector_source` a reference stands for, or null when it names no connector (not a
   * string, an unknown id, or text that is neither a name nor an id).
   */
  sourceOf(ref: unknown): Promise<string | null> | string | null {
    if (isId('connector', ref)) {
      let name = this.names.get(ref);
      if (!name) {
        if (this.names.size >= REMEMBERED) this.names.clear();
        name = this.lookUp(ref);
        this.names.set(ref, name);
      }
      return name;
    }
    if (typeof ref !== 'string') return null;
    // Connector names are lower case: any other case names the same connector.
    const name = ref.toLowerCase();
    return NAME.test(name) ? name : null;
  }

  private async lookUp(id: string): Promise<string | null> {
    try {
      return (await this.connectors.get(id)).name;
    } catch (err) {
      // Only names are remembered, so that made-up ids cannot crowd out real ones.
      this.names.delete(id);
      if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  }
}
