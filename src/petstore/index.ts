export { buildPetstoreApp, type PetstoreAppOptions, petstoreWebhooksOf } from './app.ts';
export { PETSTORE_OUTBOX, type PetstoreTables, petstoreMigrations } from './db-schema.ts';
export { petstoreErrors } from './errors.ts';
export {
  PETSTORE_EVENT_TYPES,
  type PetstoreEventType,
  type PetstoreWebhooks,
  petstoreOutbox,
} from './events/index.ts';
export { DEFAULT_LIMITS, type PetstoreLimits } from './limits.ts';
export { BODY_LIMIT_BYTES, INTERFACE_VERSION, petstoreDocument, toYaml } from './openapi.ts';
export { petstoreOperations } from './routes/index.ts';
export { ORDER_TRANSITIONS, STATUS_TABLE, statusOf } from './stock-rules.ts';
export {
  type ApiKey,
  ensureAdminKey,
  hashKey,
  KEY_PATTERN,
  type NewApiKey,
  SCOPES,
  type Scope,
} from './store/keys.ts';
