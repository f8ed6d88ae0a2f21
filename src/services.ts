import { AuditRepository } from './audit/repository.js';
import { ClientService } from './auth/clients.js';
import { resolveKeyEncryptionKey } from './auth/key-encryption.js';
import { SigningKeys } from './auth/signing-keys.js';
import { TokenService } from './auth/tokens.js';
import type { Config } from './config/config.js';
import type { Database } from './db/database.js';
import { GroupService } from './groups/service.js';
import type { Logger } from './logging/logger.js';
import { PrincipalService } from './principals/service.js';
import type { RateLimiting } from './ratelimit/index.js';

/** The domain services the HTTP routes call. */
export interface Services {
  audit: AuditRepository;
  clients: ClientService;
  keys: SigningKeys;
  tokens: TokenService;
  principals: PrincipalService;
  groups: GroupService;
  /** Stops background work (key refresh, token purge). */
  stop(): void;
}

export async function createServices(
  config: Config,
  db: Database,
  rateLimiting: RateLimiting,
  logger: Logger,
): Promise<Services> {
  const kek = await resolveKeyEncryptionKey(
    config.tokens.keyEncryptionKey,
    config.localNeo4j.dataDir,
    logger,
  );
  const keys = new SigningKeys(db, {
    alg: config.tokens.signingAlg,
    rotationDays: config.tokens.keyRotationDays,
    retainRetiredS: config.tokens.accessTtlS + 300,
    kek,
    logger,
  });
  await keys.init();
  const tokens = new TokenService(db, keys, config.tokens, logger);
  tokens.startPurge();
  const clients = new ClientService(db, config.clients, rateLimiting.authFailures, logger);
  await clients.bootstrap();
  const principals = new PrincipalService(db);
  await principals.startRiskRefresh(3_600_000, logger);
  return {
    audit: new AuditRepository(db),
    clients,
    keys,
    tokens,
    principals,
    groups: new GroupService(db),
    stop: () => {
      keys.stop();
      tokens.stop();
      principals.stop();
    },
  };
}
