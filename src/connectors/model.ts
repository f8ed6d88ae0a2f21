import type { ConnectorProfile } from '../vocabulary/connector-profiles.js';

/** The connector a SCIM request or a snapshot sync acts for, decided by its bearer token. */
export interface ScimCaller {
  id: string;
  /** The `connector_source` of everything the connector provisions. */
  name: string;
  /**
   * The SCIM dialect the connector speaks (docs/scim.md, Profiles). A SCIM request always knows
   * it; a snapshot sync, which answers no client, may leave it out (it reads as `generic`).
   */
  profile?: ConnectorProfile;
}
