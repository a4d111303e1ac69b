import { createHash, randomBytes } from 'node:crypto';
import { petstoreErrors } from '../errors.ts';
import type { StoreContext } from './context.ts';

/** What a key may do. `admin` manages keys (and, later, webhook subscriptions). */
export const SCOPES = ['pets:write', 'store', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** Every key starts with this, so leaked keys are easy to find with secret scanners. */
export const KEY_PREFIX = 'pk_';
/** `pk_` and 43 base64url characters: 256 random bits. */
export const KEY_PATTERN = /^pk_[A-Za-z0-9_-]{43}$/;
/** How many characters of a key lists show (`pk_` and 8 more). */
const SHOWN_PREFIX = 11;

export interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt?: string;
}

/** A key as just created: the only time its secret exists outside the caller's hands. */
export interface NewApiKey extends ApiKey {
  secret: string;
}

export function hashKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function generateKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

function toKey(row: {
  id: number;
  name: string;
  prefix: string;
  scopes: string;
  created_at: string;
  revoked_at: string | null;
}): ApiKey {
  const key: ApiKey = {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes.split(' ').filter(Boolean) as Scope[],
    createdAt: row.created_at,
  };
  if (row.revoked_at !== null) key.revokedAt = row.revoked_at;
  return key;
}

/** Sorts and de-duplicates scopes so a key's scopes read the same however they were given. */
function normalScopes(scopes: readonly Scope[]): Scope[] {
  return SCOPES.filter((s) => scopes.includes(s));
}

/** Creates a key; `secret` lets the operator choose it (PETSTORE_ADMIN_KEY), else it is random. */
export async function createKey(
  ctx: StoreContext,
  input: { name: string; scopes: readonly Scope[]; secret?: string },
): Promise<NewApiKey> {
  const secret = input.secret ?? generateKey();
  const row = await ctx.db
    .insertInto('api_keys')
    .values({
      name: input.name,
      prefix: secret.slice(0, SHOWN_PREFIX),
      secret_hash: hashKey(secret),
      scopes: normalScopes(input.scopes).join(' '),
      created_at: ctx.clock.now().toISOString(),
      revoked_at: null,
    })
    .returning(['id', 'name', 'prefix', 'scopes', 'created_at', 'revoked_at'])
    .executeTakeFirstOrThrow();
  return { ...toKey(row), secret };
}

export async function listKeys(ctx: StoreContext): Promise<ApiKey[]> {
  const rows = await ctx.db
    .selectFrom('api_keys')
    .select(['id', 'name', 'prefix', 'scopes', 'created_at', 'revoked_at'])
    .orderBy('id')
    .execute();
  return rows.map(toKey);
}

/** Revokes a key (kept, marked revoked, for the audit trail); revoking twice is harmless. */
export async function revokeKey(ctx: StoreContext, id: number): Promise<ApiKey> {
  const now = ctx.clock.now().toISOString();
  await ctx.db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
  const row = await ctx.db
    .selectFrom('api_keys')
    .select(['id', 'name', 'prefix', 'scopes', 'created_at', 'revoked_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) {
    throw petstoreErrors.error('key_not_found', `No API key has id ${id}. List keys with GET /keys.`);
  }
  return toKey(row);
}

/** The live (not revoked) key with this secret, if any. */
export async function findLiveKey(ctx: StoreContext, secret: string): Promise<ApiKey | undefined> {
  const row = await ctx.db
    .selectFrom('api_keys')
    .select(['id', 'name', 'prefix', 'scopes', 'created_at', 'revoked_at'])
    .where('secret_hash', '=', hashKey(secret))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row ? toKey(row) : undefined;
}

export async function countKeys(ctx: StoreContext): Promise<number> {
  const row = await ctx.db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Makes sure an admin key exists at start. With `secret` (PETSTORE_ADMIN_KEY) that key is
 * registered (once) with every scope; otherwise, when the Petstore has no key at all, one is
 * generated and returned so the caller can print it once. Returns undefined when nothing new
 * needs showing.
 */
export async function ensureAdminKey(ctx: StoreContext, secret?: string): Promise<NewApiKey | undefined> {
  if (secret !== undefined) {
    const existing = await ctx.db
      .selectFrom('api_keys')
      .select('id')
      .where('secret_hash', '=', hashKey(secret))
      .executeTakeFirst();
    if (!existing) await createKey(ctx, { name: 'admin (PETSTORE_ADMIN_KEY)', scopes: SCOPES, secret });
    return undefined;
  }
  if ((await countKeys(ctx)) > 0) return undefined;
  return createKey(ctx, { name: 'admin (first start)', scopes: SCOPES });
}
