import { createHash } from 'node:crypto';
import { transact } from '../../storage/index.ts';
import { petstoreErrors } from '../errors.ts';
import type { PetstoreTrx, StoreContext } from './context.ts';

export interface IdempotentRequest {
  /** The API key that sent it (0 when authentication is off). */
  readonly apiKeyId: number;
  readonly operation: string;
  /** The Idempotency-Key header. */
  readonly key: string;
  /** The validated body, fingerprinted to tell a retry from another request under the same key. */
  readonly body: unknown;
  readonly ttlMs: number;
}

export interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly location: string | null;
}

export function fingerprintOf(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

/**
 * Runs a create once per (API key, operation, Idempotency-Key): the record is inserted in the
 * same transaction as the work, before it, so concurrent retries queue on the record's primary
 * key (PostgreSQL waits for the first transaction, SQLite runs one writer at a time) and then
 * find its answer instead of creating again. A failed create rolls back its record with it, so
 * only successful answers are remembered. Records expire after `ttlMs`.
 */
export async function runIdempotent(
  ctx: StoreContext,
  request: IdempotentRequest,
  work: (trx: PetstoreTrx) => Promise<Answer>,
): Promise<Answer & { replayed: boolean }> {
  const fingerprint = fingerprintOf(request.body);
  return transact(ctx.db, async (trx) => {
    const now = ctx.clock.now();
    await trx
      .deleteFrom('idempotency_keys')
      .where('api_key_id', '=', request.apiKeyId)
      .where('operation', '=', request.operation)
      .where('key', '=', request.key)
      .where('expires_at', '<=', now.toISOString())
      .execute();
    const inserted = await trx
      .insertInto('idempotency_keys')
      .values({
        api_key_id: request.apiKeyId,
        operation: request.operation,
        key: request.key,
        fingerprint,
        status: 0,
        body: '',
        location: null,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + request.ttlMs).toISOString(),
      })
      .onConflict((oc) => oc.columns(['api_key_id', 'operation', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (!inserted) {
      const row = await trx
        .selectFrom('idempotency_keys')
        .select(['fingerprint', 'status', 'body', 'location'])
        .where('api_key_id', '=', request.apiKeyId)
        .where('operation', '=', request.operation)
        .where('key', '=', request.key)
        .executeTakeFirstOrThrow();
      if (row.fingerprint !== fingerprint) {
        throw petstoreErrors.error(
          'idempotency_key_reused',
          `Idempotency-Key ${JSON.stringify(request.key)} was already used with a different body. Use a new key for a new request, or resend the first body unchanged.`,
        );
      }
      return { status: row.status, body: JSON.parse(row.body), location: row.location, replayed: true };
    }
    const answer = await work(trx);
    await trx
      .updateTable('idempotency_keys')
      .set({ status: answer.status, body: JSON.stringify(answer.body), location: answer.location })
      .where('api_key_id', '=', request.apiKeyId)
      .where('operation', '=', request.operation)
      .where('key', '=', request.key)
      .execute();
    return { ...answer, replayed: false };
  });
}

/** Removes every expired record (run now and then; expired records are also replaced on reuse). */
export async function purgeExpiredIdempotency(ctx: StoreContext): Promise<void> {
  await ctx.db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', ctx.clock.now().toISOString())
    .execute();
}
