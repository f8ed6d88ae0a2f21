/** The connector a SCIM request or a snapshot sync acts for, decided by its bearer token. */
export interface ScimCaller {
  id: string;
  /** The `connector_source` of everything the connector provisions. */
  name: string;
}
