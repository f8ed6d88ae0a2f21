import type { ScimCaller } from '../connectors/model.js';
import { DEFAULT_CONNECTOR_PROFILE, type ConnectorProfile } from '../vocabulary/connector-profiles.js';

/**
 * How the SCIM service provider answers a connector where identity providers' own reference
 * tests disagree: each connector's profile picks one dialect (docs/scim.md, Profiles). What all
 * clients accept alike (a bare member id in a group PATCH, capitalised ops, ...) is no dialect.
 */
export interface ScimDialect {
  /**
   * A PATCH of a user or group answers 204 without a body (RFC 7644 §3.5.2 allows it), as
   * Microsoft's reference tests expect; otherwise 200 with the resource, as Okta expects.
   */
  readonly patchAnswersNoContent: boolean;
  /**
   * A member id that names no user or group of the connector is skipped, as Microsoft's reference
   * tests expect (they add `"string id 1"` and want 204); otherwise it is 400 `invalidValue`.
   */
  readonly skipsUnknownMembers: boolean;
}

const DIALECTS: Record<ConnectorProfile, ScimDialect> = {
  generic: { patchAnswersNoContent: false, skipsUnknownMembers: false },
  okta: { patchAnswersNoContent: false, skipsUnknownMembers: false },
  entra: { patchAnswersNoContent: true, skipsUnknownMembers: true },
};

export function dialectOf(caller: Pick<ScimCaller, 'profile'>): ScimDialect {
  return DIALECTS[caller.profile ?? DEFAULT_CONNECTOR_PROFILE];
}
