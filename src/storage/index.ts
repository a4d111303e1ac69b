export {
  type Database,
  type Dialect,
  openDatabase,
  quoteIdentifier,
  type StorageLocation,
} from './connection.ts';
export { isConnectionLost, isForeignKeyViolation, isUniqueViolation } from './errors.ts';
export { type BatchWork, type GroupCommit, MAX_BATCH, type Outcome } from './group-commit.ts';
export { booleanColumnType, type DialectMigration, idColumnType, migrateToLatest } from './migrate.ts';
export { compileOnce, compileRowsOnce, prepareValuesQuery, readById } from './prepared.ts';
export { batchReads, shareReads } from './read-batch.ts';
export { rowsOf, runSteps, runStepsIn, runStepsSync, type Steps } from './steps.ts';
export { transact } from './transact.ts';
export { type DeliveryView, deliveryLog, deliveryView } from './webhook-delivery-view.ts';
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
