import { join, resolve } from 'node:path';
import { ConfigError, loadPlatformConfig } from '../config/index.ts';
import { applyPasswordHash, type ResetAnswer } from '../platform/accounts/passwords.ts';
import { generatePassword, hashPassword } from '../platform/accounts/secrets.ts';
import { normaliseEmail } from '../platform/accounts/users.ts';
import { type PlatformTables, platformMigrations } from '../platform/db-schema.ts';
import { migrateToLatest, openDatabase } from '../storage/index.ts';

/**
 * `npm run reset-password -- <email>`: for an operator locked out of an account (the only admin's,
 * typically). Reads the configuration `npm start` reads (DATA_DIR, DATABASE_URL) and works with
 * the platform stopped or running: sets a new random password, printed once, signs out every
 * session of the account and revokes its API tokens (whoever held the account before the reset
 * keeps nothing). It writes the database itself either way; on
 * SQLite a running platform and this script take turns at writing (busy_timeout).
 */
async function main(): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  if (args.length !== 1 || args[0]?.startsWith('-')) {
    process.stderr.write('Usage: npm run reset-password -- <email>\n');
    return 2;
  }
  const email = normaliseEmail(args[0] as string);
  let config: ReturnType<typeof loadPlatformConfig>;
  try {
    config = loadPlatformConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 2;
  }
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  const database = openDatabase<PlatformTables>(
    config.databaseUrl
      ? { kind: 'postgres', url: config.databaseUrl, applicationName: 'kennel-reset-password' }
      : { kind: 'sqlite', file: join(resolve(config.dataDir), 'kennel.db') },
  );
  let answer: ResetAnswer;
  try {
    await migrateToLatest(database.db, database.dialect, 'platform', platformMigrations);
    answer = await applyPasswordHash(database, email, passwordHash);
  } finally {
    await database.close();
  }
  if (!answer.ok) {
    process.stderr.write(`${answer.message}\n`);
    return 1;
  }
  process.stdout.write(
    `New password for ${email} (shown this once; not stored in clear):\n  ${password}\nSigned out ${answer.sessionsEnded} session(s) and revoked ${answer.tokensRevoked} API token(s) of this account: make new tokens where they were used.\n`,
  );
  return 0;
}

process.exitCode = await main();
