import {
  type CompiledQuery,
  type Generated,
  type Kysely,
  type Selectable,
  sql,
  type Transaction,
} from 'kysely';
import type { DeliveryResult } from '../lib/webhooks/index.ts';
import { createEnvelope, newMessageId, RETRY_SCHEDULE, retryDelay } from '../lib/webhooks/index.ts';
import type { Dialect } from './connection.ts';
import { idColumnType } from './migrate.ts';
import { compileRowsOnce } from './prepared.ts';
import { runStepsIn, type Steps } from './steps.ts';

/**
 * The transactional outbox of webhook messages and their delivery log, for any service: each
 * service names its own two tables (created by its own migration through `createOutboxTables`),
 * so the Petstore's events and the platform's never share rows.
 *
 * Contract:
 * - `enqueue` runs inside the caller's transaction: the message exists exactly when the change
 *   it describes commits (a rolled-back change emits nothing; a crash after commit loses nothing).
 * - `claimDue` leases each due message to one node: a compare-and-set on the lease, so nodes on
 *   one PostgreSQL never attempt the same message at the same time. A node that dies mid-attempt
 *   leaves the lease to run out; the message is then attempted again (at least once).
 * - `recordAttempt` logs the attempt and moves the message on: delivered, scheduled for the next
 *   retry, or failed once the retry schedule is exhausted. Only the lease holder can record.
 * - `redeliver` puts a message back to pending, due now, with a fresh schedule.
 */
export interface OutboxTables {
  /** One row per message: what to send, to which endpoint, its state and its lease. */
  readonly messages: string;
  /** One row per attempt: when, status code, duration, error. */
  readonly attempts: string;
}

export type MessageState = 'pending' | 'delivered' | 'failed';

export interface OutboxMessage {
  readonly id: string;
  /** The service's name for the endpoint (e.g. `team:3`), resolved to a URL and secret at send time. */
  readonly endpointKey: string;
  /** What the event is about, for the service's own views (e.g. `domain:12`); may be null. */
  readonly subject: string | null;
  readonly type: string;
  readonly body: string;
  readonly state: MessageState;
  readonly attempts: number;
  readonly nextAttemptAt: string | null;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly createdAt: string;
  readonly deliveredAt: string | null;
}

export interface OutboxAttempt {
  readonly messageId: string;
  readonly attempt: number;
  readonly at: string;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
  readonly ok: boolean;
}

export interface NewMessage {
  readonly endpointKey: string;
  readonly subject?: string | null;
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/** Creates the two tables under the given names; call it from the service's migration. */
export async function createOutboxTables(
  db: Kysely<unknown>,
  dialect: Dialect,
  tables: OutboxTables,
): Promise<void> {
  const id = idColumnType(dialect);
  // `seq` orders messages as they were enqueued (several share one clock reading); `id` is the
  // public message id, random so that nodes need no coordination.
  await db.schema
    .createTable(tables.messages)
    .addColumn('seq', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('endpoint_key', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .execute();
  await db.schema
    .createTable(tables.attempts)
    .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('message_id', 'text', (c) =>
      c.notNull().references(`${tables.messages}.id`).onDelete('cascade'),
    )
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('ok', 'integer', (c) => c.notNull())
    .execute();
  const indexes: [table: string, suffix: string, columns: string[]][] = [
    [tables.messages, 'due', ['next_attempt_at']],
    [tables.messages, 'endpoint', ['endpoint_key', 'created_at']],
    [tables.messages, 'subject', ['subject']],
    [tables.attempts, 'message', ['message_id', 'id']],
  ];
  for (const [table, suffix, columns] of indexes)
    await db.schema.createIndex(`${table}_${suffix}`).on(table).columns(columns).execute();
}

/**
 * The columns of a service's outbox tables (`createOutboxTables`), for its Kysely table types:
 * `{ [messages]: OutboxMessageTable; [attempts]: OutboxAttemptTable }`.
 */
export interface OutboxMessageTable {
  seq: Generated<number>;
  id: string;
  endpoint_key: string;
  subject: string | null;
  type: string;
  body: string;
  state: MessageState;
  attempts: number;
  next_attempt_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface OutboxAttemptTable {
  id: Generated<number>;
  message_id: string;
  attempt: number;
  at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  ok: number;
}

/** A message row as read, or as written (the sequence number is the database's). */
type MessageRow = Omit<Selectable<OutboxMessageTable>, 'seq'> & { seq?: number };
type AttemptRow = Selectable<OutboxAttemptTable>;

// biome-ignore lint/suspicious/noExplicitAny: the table names are the service's, chosen at run time
type AnyDb = Kysely<any> | Transaction<any>;

function toMessage(row: MessageRow): OutboxMessage {
  return {
    id: row.id,
    endpointKey: row.endpoint_key,
    subject: row.subject,
    type: row.type,
    body: row.body,
    state: row.state,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastError: row.last_error,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  };
}

/** The columns written when a message is enqueued, in the order they are bound. */
const ENQUEUED_COLUMNS = [
  'id',
  'endpoint_key',
  'subject',
  'type',
  'body',
  'state',
  'attempts',
  'next_attempt_at',
  'created_at',
] as const;
type EnqueuedRow = Pick<MessageRow, (typeof ENQUEUED_COLUMNS)[number]>;

function newRow(message: NewMessage, at: Date): MessageRow {
  return {
    id: newMessageId(),
    endpoint_key: message.endpointKey,
    subject: message.subject ?? null,
    type: message.type,
    body: JSON.stringify(createEnvelope(message.type, at, message.data)),
    state: 'pending',
    attempts: 0,
    next_attempt_at: at.toISOString(),
    lease_owner: null,
    lease_until: null,
    last_status: null,
    last_error: null,
    created_at: at.toISOString(),
    delivered_at: null,
  };
}

export class WebhookOutbox {
  readonly #db: AnyDb;
  readonly #t: OutboxTables;
  readonly #schedule: readonly { readonly delayMs: number }[];
  readonly #leaseMs: number;
  readonly #insert: (rows: readonly EnqueuedRow[]) => CompiledQuery;

  constructor(
    // biome-ignore lint/suspicious/noExplicitAny: any service's schema
    db: Kysely<any>,
    options: { tables: OutboxTables; schedule?: readonly { readonly delayMs: number }[]; leaseMs?: number },
  ) {
    this.#db = db;
    this.#t = options.tables;
    this.#schedule = options.schedule ?? RETRY_SCHEDULE;
    this.#leaseMs = options.leaseMs ?? 60_000;
    const placeholder = Object.fromEntries(ENQUEUED_COLUMNS.map((c) => [c, ''])) as unknown as EnqueuedRow;
    this.#insert = compileRowsOnce(
      (rows: readonly EnqueuedRow[]) => db.insertInto(this.#t.messages).values([...rows]),
      placeholder,
      (row) => ENQUEUED_COLUMNS.map((c) => row[c]),
    );
  }

  get leaseMs(): number {
    return this.#leaseMs;
  }

  /**
   * Adds messages, due at once, as steps of the caller's transaction (see storage/steps.ts): the
   * messages commit or roll back with the change they describe. One statement for them all.
   */
  *enqueueSteps(messages: readonly NewMessage[], at: Date): Steps<OutboxMessage[]> {
    if (messages.length === 0) return [];
    const rows = messages.map((m) => newRow(m, at));
    yield this.#insert(rows);
    return rows.map(toMessage);
  }

  /** Adds a message inside `trx` (the caller's transaction), due at once. */
  async enqueue(
    // biome-ignore lint/suspicious/noExplicitAny: the caller's transaction, whatever its schema
    trx: Transaction<any> | Kysely<any>,
    message: NewMessage,
    at: Date,
  ): Promise<OutboxMessage> {
    const [enqueued] = await runStepsIn(trx, this.enqueueSteps([message], at));
    return enqueued as OutboxMessage;
  }

  /**
   * Leases up to `limit` due messages to `nodeId` until now + leaseMs. Due: pending, next attempt
   * reached, and no live lease. Each row is taken by a conditional update, so of two nodes racing
   * for a message exactly one gets it.
   */
  async claimDue(nodeId: string, now: Date, limit = 20): Promise<OutboxMessage[]> {
    const nowIso = now.toISOString();
    const due = (await this.#db
      .selectFrom(this.#t.messages)
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', nowIso)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowIso)]))
      .orderBy('next_attempt_at')
      .orderBy('seq')
      .limit(limit)
      .execute()) as { id: string }[];
    const claimed: OutboxMessage[] = [];
    for (const { id } of due) {
      const row = (await this.#db
        .updateTable(this.#t.messages)
        .set({ lease_owner: nodeId, lease_until: new Date(now.getTime() + this.#leaseMs).toISOString() })
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', nowIso)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowIso)]))
        .returningAll()
        .executeTakeFirst()) as MessageRow | undefined;
      if (row) claimed.push(toMessage(row));
    }
    return claimed;
  }

  /**
   * Logs one attempt of a message this node holds and moves it on. `final` marks a failure not
   * worth retrying (the endpoint was removed). Returns the message after it, or undefined when
   * the lease was lost (another node took over; its own attempt will be recorded).
   */
  async recordAttempt(
    messageId: string,
    nodeId: string,
    result: DeliveryResult,
    at: Date,
    options: { final?: boolean } = {},
  ): Promise<OutboxMessage | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      const current = (await trx
        .selectFrom(this.#t.messages)
        .selectAll()
        .where('id', '=', messageId)
        .where('lease_owner', '=', nodeId)
        .where('state', '=', 'pending')
        .executeTakeFirst()) as MessageRow | undefined;
      if (!current) return undefined;
      const attempt = Number(current.attempts) + 1;
      await trx
        .insertInto(this.#t.attempts)
        .values({
          message_id: messageId,
          attempt,
          at: at.toISOString(),
          status_code: result.statusCode,
          duration_ms: result.durationMs,
          error: result.error,
          ok: result.ok ? 1 : 0,
        })
        .execute();
      const delay = result.ok || options.final ? null : retryDelay(attempt, this.#schedule);
      const state: MessageState = result.ok ? 'delivered' : delay === null ? 'failed' : 'pending';
      const row = (await trx
        .updateTable(this.#t.messages)
        .set({
          state,
          attempts: attempt,
          next_attempt_at: delay === null ? null : new Date(at.getTime() + delay).toISOString(),
          lease_owner: null,
          lease_until: null,
          last_status: result.statusCode,
          last_error: result.error,
          delivered_at: result.ok ? at.toISOString() : current.delivered_at,
        })
        .where('id', '=', messageId)
        .returningAll()
        .executeTakeFirstOrThrow()) as MessageRow;
      return toMessage(row);
    });
  }

  /**
   * Manual redelivery: the message is pending again, due at once, with a fresh retry schedule.
   * The log keeps every earlier attempt. Undefined when there is no such message.
   */
  async redeliver(messageId: string, at: Date): Promise<OutboxMessage | undefined> {
    const row = (await this.#db
      .updateTable(this.#t.messages)
      .set({
        state: 'pending',
        attempts: 0,
        next_attempt_at: at.toISOString(),
        lease_owner: null,
        lease_until: null,
      })
      .where('id', '=', messageId)
      .returningAll()
      .executeTakeFirst()) as MessageRow | undefined;
    return row ? toMessage(row) : undefined;
  }

  async get(messageId: string): Promise<OutboxMessage | undefined> {
    const row = (await this.#db
      .selectFrom(this.#t.messages)
      .selectAll()
      .where('id', '=', messageId)
      .executeTakeFirst()) as MessageRow | undefined;
    return row ? toMessage(row) : undefined;
  }

  /** An endpoint's messages, newest first; `subjects` narrows to what they are about. */
  async list(filter: {
    endpointKey?: string;
    subjects?: readonly string[];
    ids?: readonly string[];
    limit?: number;
  }): Promise<OutboxMessage[]> {
    if (filter.subjects?.length === 0 || filter.ids?.length === 0) return [];
    const rows = (await this.#db
      .selectFrom(this.#t.messages)
      .selectAll()
      .$if(filter.endpointKey !== undefined, (q) =>
        q.where('endpoint_key', '=', filter.endpointKey as string),
      )
      .$if(filter.subjects !== undefined, (q) => q.where('subject', 'in', [...(filter.subjects ?? [])]))
      .$if(filter.ids !== undefined, (q) => q.where('id', 'in', [...(filter.ids ?? [])]))
      .orderBy('seq', 'desc')
      .limit(filter.limit ?? 100)
      .execute()) as MessageRow[];
    return rows.map(toMessage);
  }

  /** The delivery log of some messages, oldest attempt first. */
  async attemptsOf(messageIds: readonly string[]): Promise<OutboxAttempt[]> {
    if (messageIds.length === 0) return [];
    const rows = (await this.#db
      .selectFrom(this.#t.attempts)
      .selectAll()
      .where('message_id', 'in', [...messageIds])
      .orderBy('id')
      .execute()) as AttemptRow[];
    return rows.map((r) => ({
      messageId: r.message_id,
      attempt: Number(r.attempt),
      at: r.at,
      statusCode: r.status_code === null ? null : Number(r.status_code),
      durationMs: Number(r.duration_ms),
      error: r.error,
      ok: Boolean(r.ok),
    }));
  }

  /** The earliest time a pending message is due, for a worker deciding how long to sleep. */
  async nextDueAt(): Promise<Date | null> {
    const row = (await this.#db
      .selectFrom(this.#t.messages)
      .select(sql<string | null>`min(next_attempt_at)`.as('next'))
      .where('state', '=', 'pending')
      .executeTakeFirst()) as { next: string | null } | undefined;
    return row?.next ? new Date(row.next) : null;
  }
}
