import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { PlatformTables } from '../db-schema.ts';
import { setPasswordHash } from './people.ts';
import { normaliseEmail } from './users.ts';

/**
 * A running platform on SQLite holds its database file exclusively (src/storage/sqlite-adapter.ts),
 * so `npm run reset-password` cannot open it: it leaves its request (the email and the new
 * password's scrypt hash, never the password) in the data directory, and the platform, which
 * looks for it every second, applies it and writes the answer. Whoever can write the data
 * directory can already rewrite the database, so this gives nobody more than they have.
 */
const REQUEST = 'reset-password.request.json';
const answerFile = (dataDir: string, id: string) => join(dataDir, `reset-password.${id}.answer.json`);

interface ResetRequest {
  id: string;
  email: string;
  passwordHash: string;
}

export type ResetAnswer = { ok: true } | { ok: false; message: string };

/** Sets the hash and signs out the account; the answer names the admins for an unknown email. */
export async function applyPasswordHash(
  db: Kysely<PlatformTables>,
  email: string,
  passwordHash: string,
): Promise<ResetAnswer> {
  const user = await db
    .selectFrom('users')
    .select('id')
    .where('email', '=', normaliseEmail(email))
    .executeTakeFirst();
  if (!user) {
    const admins = await db.selectFrom('users').select(['email', 'is_admin']).orderBy('id').execute();
    const names = admins.filter((a) => Boolean(a.is_admin)).map((a) => a.email);
    return {
      ok: false,
      message: `No account uses ${normaliseEmail(email)}. ${
        names.length > 0
          ? `Platform admins: ${names.join(', ')}.`
          : 'There is no account yet: npm start creates the first admin.'
      }`,
    };
  }
  await setPasswordHash({ db }, user.id, passwordHash);
  return { ok: true };
}

/** The script's side: leaves the request, waits for the platform's answer (undefined: none came). */
export async function requestFromRunningPlatform(
  dataDir: string,
  email: string,
  passwordHash: string,
  timeoutMs = 10_000,
): Promise<ResetAnswer | undefined> {
  const request: ResetRequest = { id: randomUUID(), email, passwordHash };
  const temporary = join(dataDir, `${REQUEST}.${request.id}`);
  writeFileSync(temporary, JSON.stringify(request), { mode: 0o600 });
  renameSync(temporary, join(dataDir, REQUEST));
  const answer = answerFile(dataDir, request.id);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    await new Promise((done) => setTimeout(done, 100));
    if (existsSync(answer)) {
      const parsed = JSON.parse(readFileSync(answer, 'utf8')) as ResetAnswer;
      rmSync(answer, { force: true });
      return parsed;
    }
  }
  rmSync(join(dataDir, REQUEST), { force: true });
  return undefined;
}

/** The platform's side: looks for a request every `everyMs` until stopped. */
export function serveResetRequests(
  db: Kysely<PlatformTables>,
  dataDir: string,
  onError: (error: unknown) => void,
  everyMs = 1_000,
): { stop(): void } {
  const file = join(dataDir, REQUEST);
  let busy = false;
  const timer = setInterval(async () => {
    if (busy || !existsSync(file)) return;
    busy = true;
    try {
      const taken = `${file}.taken`;
      renameSync(file, taken);
      const request = JSON.parse(readFileSync(taken, 'utf8')) as ResetRequest;
      rmSync(taken, { force: true });
      const answer = await applyPasswordHash(db, request.email, request.passwordHash);
      writeFileSync(answerFile(dataDir, request.id), JSON.stringify(answer), { mode: 0o600 });
    } catch (error) {
      onError(error);
    } finally {
      busy = false;
    }
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
