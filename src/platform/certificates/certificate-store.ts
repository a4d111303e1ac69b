import { randomBytes } from 'node:crypto';
import type { Transaction } from 'kysely';
import { open, type SealingKey, seal } from '../../lib/sealed-box.ts';
import type { PlatformDb } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { createInternalCa, type InternalCa } from './internal-issuer.ts';
import type { ChallengeStore, IssuedCertificate } from './issuer.ts';

export interface StoredCertificate {
  readonly hostname: string;
  readonly certificatePem: string;
  readonly privateKeyPem: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly issuer: string;
}

/**
 * Certificates in the database, private keys sealed with the configured key (the first of
 * `keys` seals; any of them opens, so keys can be rotated).
 */
export class CertificateStore {
  readonly #db: PlatformDb;
  readonly #keys: readonly SealingKey[];

  constructor(db: PlatformDb, keys: readonly SealingKey[]) {
    if (keys.length === 0) throw new Error('CertificateStore needs at least one sealing key');
    this.#db = db;
    this.#keys = keys;
  }

  /**
   * Saves (replaces) a hostname's certificate, owned by `domainId` (the domain that ordered it);
   * in `db` when given, the caller's transaction.
   */
  async save(
    hostname: string,
    issued: IssuedCertificate,
    now: Date,
    db: PlatformDb | Transaction<PlatformTables> = this.#db,
    domainId: number | null = null,
  ): Promise<void> {
    const row = {
      hostname,
      domain_id: domainId,
      issuer: issued.issuer,
      certificate_pem: issued.certificatePem,
      key_sealed: seal(issued.privateKeyPem, this.#keys[0] as SealingKey),
      not_before: issued.notBefore.toISOString(),
      not_after: issued.notAfter.toISOString(),
      created_at: now.toISOString(),
    };
    await db
      .insertInto('certificates')
      .values(row)
      .onConflict((oc) => oc.column('hostname').doUpdateSet(row))
      .execute();
  }

  async load(hostname: string): Promise<StoredCertificate | undefined> {
    const row = await this.#db
      .selectFrom('certificates')
      .selectAll()
      .where('hostname', '=', hostname)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      hostname,
      certificatePem: row.certificate_pem,
      privateKeyPem: open(row.key_sealed, this.#keys),
      notBefore: new Date(row.not_before),
      notAfter: new Date(row.not_after),
      issuer: row.issuer,
    };
  }

  async remove(hostname: string): Promise<void> {
    await this.#db.deleteFrom('certificates').where('hostname', '=', hostname).execute();
  }

  /** A platform secret (the ACME account key), sealed; undefined until saved. */
  async secret(name: string): Promise<string | undefined> {
    const row = await this.#platformKey(name).executeTakeFirst();
    return row ? open(row.value, this.#keys) : undefined;
  }

  async saveSecret(name: string, value: string, now: Date): Promise<void> {
    const sealed = seal(value, this.#keys[0] as SealingKey);
    await this.#db
      .insertInto('platform_keys')
      .values({ name, value: sealed, created_at: now.toISOString() })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value: sealed }))
      .execute();
  }

  /**
   * The TLS session ticket keys (48 bytes), shared through the database so a session resumed on
   * another edge node still resumes.
   */
  async ticketKeys(now: Date): Promise<Buffer> {
    const value = await this.#createdOnce('tls_ticket_keys', now, async () =>
      seal(randomBytes(48).toString('base64'), this.#keys[0] as SealingKey),
    );
    return Buffer.from(open(value, this.#keys), 'base64');
  }

  /** The internal CA's root, created on first use and kept (its key sealed) in the database. */
  async internalCa(now: Date): Promise<InternalCa> {
    const value = await this.#createdOnce('internal_ca', now, async () => {
      const ca = await createInternalCa('Kennel Local CA', now);
      return JSON.stringify({
        certificatePem: ca.certificatePem,
        keySealed: seal(ca.privateKeyPem, this.#keys[0] as SealingKey),
      });
    });
    const stored = JSON.parse(value) as { certificatePem: string; keySealed: string };
    return { certificatePem: stored.certificatePem, privateKeyPem: open(stored.keySealed, this.#keys) };
  }

  #platformKey(name: string) {
    return this.#db.selectFrom('platform_keys').select('value').where('name', '=', name);
  }

  /**
   * The stored value of a platform key that `create` makes on first use. Another node may create
   * it at the same time: the first one stored wins, and every node uses that one.
   */
  async #createdOnce(name: string, now: Date, create: () => Promise<string>): Promise<string> {
    const row = await this.#platformKey(name).executeTakeFirst();
    if (row) return row.value;
    await this.#db
      .insertInto('platform_keys')
      .values({ name, value: await create(), created_at: now.toISOString() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    return (await this.#platformKey(name).executeTakeFirstOrThrow()).value;
  }
}

/** http-01 answers in the database, so any edge node can answer the CA. */
export function databaseChallenges(
  db: PlatformDb,
  now: () => Date,
): ChallengeStore & { answer(token: string): Promise<string | undefined> } {
  return {
    async put(token, keyAuthorization, hostname) {
      await db
        .insertInto('acme_challenges')
        .values({ token, key_authorization: keyAuthorization, hostname, created_at: now().toISOString() })
        .onConflict((oc) => oc.column('token').doUpdateSet({ key_authorization: keyAuthorization, hostname }))
        .execute();
    },
    async remove(token) {
      await db.deleteFrom('acme_challenges').where('token', '=', token).execute();
    },
    async answer(token) {
      const row = await db
        .selectFrom('acme_challenges')
        .select('key_authorization')
        .where('token', '=', token)
        .executeTakeFirst();
      return row?.key_authorization;
    },
  };
}
