export {
  type Database,
  type Dialect,
  openDatabase,
  quoteIdentifier,
  type StorageLocation,
} from './connection.ts';
export { isForeignKeyViolation, isUniqueViolation } from './errors.ts';
export { booleanColumnType, type DialectMigration, idColumnType, migrateToLatest } from './migrate.ts';
export { prepareQuery } from './prepared.ts';
export { transact } from './transact.ts';
