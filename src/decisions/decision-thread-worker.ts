import { serveReplica } from './replica-thread.js';

/** A decision thread (src/decisions/decision-thread.ts) that watches no batch. */
serveReplica();
