import { type Generated, sql } from 'kysely';
import {
  booleanColumnType,
  createOutboxTables,
  type DialectMigration,
  idColumnType,
  type OutboxTables,
} from '../storage/index.ts';
import type { PetStatus } from './stock-rules.ts';

/**
 * The Petstore's webhook outbox. Prefixed: on PostgreSQL the Petstore may share a database (and
 * schema) with the platform, whose outbox is `webhook_messages`.
 */
export const PETSTORE_OUTBOX: OutboxTables = {
  messages: 'petstore_webhook_messages',
  attempts: 'petstore_webhook_attempts',
};

/** The Petstore's tables as Kysely sees them. Timestamps are ISO 8601 UTC text in both dialects. */
export interface PetstoreTables {
  // `version` (migration 0004): 1 at insert, +1 with every change of the row, in the change's
  // transaction; the ETag is made of it. A pet's also moves when its inventory status does.
  categories: {
    id: Generated<number>;
    name: string;
    name_key: string;
    description: string | null;
    version: Generated<number>;
  };
  pets: {
    id: Generated<number>;
    name: string;
    category_id: number;
    created_at: string;
    version: Generated<number>;
  };
  inventory: {
    pet_id: number;
    quantity: number;
    reserved: number;
    /** The pet's status, always statusOf() its stock (stock-rules.ts). */
    status: PetStatus;
    version: Generated<number>;
  };
  orders: {
    id: Generated<number>;
    pet_id: number;
    quantity: number;
    ship_date: string | null;
    complete: number | boolean;
    created_at: string;
    version: Generated<number>;
  };
  api_keys: {
    id: Generated<number>;
    name: string;
    /** The key's first characters, shown in lists so people can tell keys apart. */
    prefix: string;
    /** SHA-256 of the whole key, hex; the key itself is never stored. */
    secret_hash: string;
    /** Space-separated scope names. */
    scopes: string;
    created_at: string;
    revoked_at: string | null;
  };
  idempotency_keys: {
    /** The key that sent the request (0 when authentication is off); keys do not share records. */
    api_key_id: number;
    operation: string;
    key: string;
    /** SHA-256 of the request body as validated, so a retry with another body is told apart. */
    fingerprint: string;
    status: number;
    body: string;
    location: string | null;
    created_at: string;
    expires_at: string;
  };
  petstore_webhook_subscriptions: {
    id: Generated<number>;
    url: string;
    /** The `whsec_` signing secret, sealed (src/lib/sealed-box.ts): it must be recoverable to sign. */
    secret_sealed: string;
    /** Space-separated event type patterns: `pet.created`, `pet.*` or `*`. */
    event_types: string;
    description: string | null;
    created_at: string;
  };
  /**
   * PostgreSQL only (migration 0005): the cluster rate-limit count, one row per policy, window
   * and caller (src/petstore/security/shared-window-limiter.ts).
   */
  petstore_rate_limits: {
    /** `key` or `address`. */
    policy: string;
    /** Start of the fixed window, epoch milliseconds. */
    window_start: number;
    /** The key id or the client address. */
    caller: string;
    /** Requests of the window handed out to nodes, at most the quota. */
    claimed: number;
    /** What the last claim granted (how the claim learns its grant in one statement). */
    granted: number;
  };
}

export const petstoreMigrations: Record<string, DialectMigration> = {
  '0001_initial': {
    async up(db, dialect) {
      const id = idColumnType(dialect);
      await db.schema
        .createTable('categories')
        .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('name_key', 'text', (c) => c.notNull().unique())
        .addColumn('description', 'text')
        .execute();
      await db.schema
        .createTable('pets')
        .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('category_id', 'bigint', (c) =>
          c.notNull().references('categories.id').onDelete('restrict'),
        )
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('pets_category_id').on('pets').column('category_id').execute();
      await db.schema
        .createTable('inventory')
        .addColumn('pet_id', 'bigint', (c) => c.primaryKey().references('pets.id').onDelete('cascade'))
        .addColumn('quantity', 'integer', (c) => c.notNull().check(sqlCheck('quantity >= 0')))
        .addColumn('reserved', 'integer', (c) => c.notNull().check(sqlCheck('reserved >= 0')))
        .addColumn('status', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('inventory_status').on('inventory').columns(['status', 'pet_id']).execute();
      await db.schema
        .createTable('orders')
        .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
        .addColumn('pet_id', 'bigint', (c) => c.notNull().references('pets.id').onDelete('restrict'))
        .addColumn('quantity', 'integer', (c) => c.notNull().check(sqlCheck('quantity > 0')))
        .addColumn('ship_date', 'text')
        .addColumn('complete', booleanColumnType(dialect), (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('orders_pet_id').on('orders').columns(['pet_id', 'id']).execute();
    },
  },
  '0002_keys_idempotency': {
    async up(db, dialect) {
      const id = idColumnType(dialect);
      await db.schema
        .createTable('api_keys')
        .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('api_key_id', 'bigint', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('location', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['api_key_id', 'operation', 'key'])
        .execute();
      await db.schema
        .createIndex('idempotency_keys_expires_at')
        .on('idempotency_keys')
        .column('expires_at')
        .execute();
    },
  },
  '0003_webhooks': {
    async up(db, dialect) {
      const id = idColumnType(dialect);
      await db.schema
        .createTable('petstore_webhook_subscriptions')
        .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('secret_sealed', 'text', (c) => c.notNull())
        .addColumn('event_types', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await createOutboxTables(db, dialect, PETSTORE_OUTBOX);
    },
  },
  '0004_row_versions': {
    // Row versions for cheap strong ETags (issue 14): existing rows start at version 1, which no
    // tag handed out before named (those were hashes), so an old If-Match gets 412 once.
    async up(db) {
      for (const table of ['categories', 'pets', 'inventory', 'orders']) {
        await db.schema
          .alterTable(table)
          .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
          .execute();
      }
    },
  },
  '0005_rate_limit_windows': {
    // The cluster rate-limit policy's shared count (issue 16). UNLOGGED: a count that lasts a
    // window needs no WAL, and losing it in a crash only restarts the windows. A low fillfactor
    // leaves room on each page for the row's next version, so updates stay HOT (no index
    // change). SQLite keeps counting in memory: no table there.
    async up(db, dialect) {
      if (dialect !== 'postgres') return;
      await db.schema
        .createTable('petstore_rate_limits')
        .modifyFront(sql`unlogged`)
        .addColumn('policy', 'text', (c) => c.notNull())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('caller', 'text', (c) => c.notNull())
        .addColumn('claimed', 'integer', (c) => c.notNull())
        .addColumn('granted', 'integer', (c) => c.notNull())
        // Policy and window first: old windows are purged by a range of the primary key.
        .addPrimaryKeyConstraint('petstore_rate_limits_pk', ['policy', 'window_start', 'caller'])
        .modifyEnd(sql`with (fillfactor = 50)`)
        .execute();
    },
  },
};

function sqlCheck(expression: string) {
  return sql.raw(expression);
}
