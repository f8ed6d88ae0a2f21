/**
 * The SCIM dialects a connector may speak: where the identity providers' own reference tests
 * disagree, the connector's profile decides how the SCIM service provider answers it.
 */
export const CONNECTOR_PROFILES = ['generic', 'okta', 'entra'] as const;

export type ConnectorProfile = (typeof CONNECTOR_PROFILES)[number];

/** The profile of a connector created without one, and of one stored before profiles existed. */
export const DEFAULT_CONNECTOR_PROFILE: ConnectorProfile = 'generic';
