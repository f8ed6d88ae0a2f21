import type { OperationContext } from '../audit/audit.js';
import type { ScimCaller } from '../connectors/model.js';
import { patchResource } from './patch.js';
import type { ScimObject } from './resource.js';
import type { ResourceSchema } from './schema.js';

/**
 * PUT and PATCH of a SCIM resource are one write (RFC 7644 §3.5): the state after it is the body
 * read whole, or the current state with the operations applied and read again the same way.
 * Users and groups differ only in how a body is read, the schema PATCH paths resolve against, and
 * how they store the result (`write`).
 */
export abstract class ScimResourceWrites {
  /** The schema PATCH paths resolve against. */
  protected abstract readonly resource: ResourceSchema;

  /** Reads a client's body as this resource, refusing what it cannot take. */
  protected abstract read(body: unknown): ScimObject;

  /** Stores the state `next` makes of the current one, under the resource's lock. */
  protected abstract write(
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined,
    op: OperationContext,
    next: (current: ScimObject) => ScimObject,
  ): Promise<ScimObject>;

  /** The operations as the patcher takes them; a resource may rewrite a client's dialect first. */
  protected operationsOf(operations: unknown[]): unknown[] {
    return operations;
  }

  async replace(
    caller: ScimCaller,
    id: string,
    body: unknown,
    ifMatch: string | undefined,
    op: OperationContext,
  ): Promise<ScimObject> {
    const scim = this.read(body);
    return this.write(caller, id, ifMatch, op, () => scim);
  }

  async patch(
    caller: ScimCaller,
    id: string,
    operations: unknown[],
    ifMatch: string | undefined,
    op: OperationContext,
  ): Promise<ScimObject> {
    const prepared = this.operationsOf(operations);
    return this.write(caller, id, ifMatch, op, (current) =>
      this.read(patchResource(current, prepared, this.resource)),
    );
  }
}
