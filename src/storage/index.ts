export {
  type Database,
  type Dialect,
  openDatabase,
  quoteIdentifier,
  type StorageLocation,
} from './connection.ts';
export { isConnectionLost, isForeignKeyViolation, isUniqueViolation } from './errors.ts';
export { booleanColumnType, type DialectMigration, idColumnType, migrateToLatest } from './migrate.ts';
export { prepareQuery } from './prepared.ts';
export { batchReads, shareReads } from './read-batch.ts';
export { transact } from './transact.ts';
export { type DeliveryView, deliveryView } from './webhook-delivery-view.ts';
export {
  createOutboxTables,
  type MessageState,
  type NewMessage,
  type OutboxAttempt,
  type OutboxAttemptTable,
  type OutboxMessage,
  type OutboxMessageTable,
  type OutboxTables,
  WebhookOutbox,
} from './webhook-outbox.ts';
export { type ResolveEndpoint, WebhookWorker, type WebhookWorkerOptions } from './webhook-worker.ts';
