import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { DeriveKey } from './password-hasher.ts';

/** scrypt on the libuv threadpool: for hashing new passwords (sign-ins use a PasswordHasher). */
const scryptAsync = promisify(scrypt) as DeriveKey;

/** scrypt parameters (OWASP's minimum N=2^17, r=8, p=1); stored with each hash so they can rise. */
const PARAMS = { N: 2 ** 17, r: 8, p: 1, maxmem: 256 * 1024 * 1024 };
const KEY_LENGTH = 32;

/** `scrypt$N$r$p$salt$hash`, base64url parts. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, KEY_LENGTH, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/**
 * Whether `password` matches `stored`. `derive` runs scrypt: a PasswordHasher's for sign-ins
 * (bounded, niced threads), the threadpool's by default.
 */
export async function verifyPassword(
  password: string,
  stored: string,
  derive: DeriveKey = scryptAsync,
): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: PARAMS.maxmem,
  });
  return timingSafeEqual(key, expected);
}

/**
 * A stored hash no password matches (random salt and key), with today's parameters: a sign-in
 * for an unknown email is checked against it, so it costs what a known email's check costs and
 * the answer's timing does not tell which accounts exist.
 */
export const DUMMY_PASSWORD_HASH = [
  'scrypt',
  PARAMS.N,
  PARAMS.r,
  PARAMS.p,
  randomBytes(16).toString('base64url'),
  randomBytes(KEY_LENGTH).toString('base64url'),
].join('$');

/**
 * A random secret shown once (API tokens, session ids). Only its SHA-256 is stored: the secret
 * has 256 bits of entropy, so a fast hash is enough and lookups stay indexable.
 */
export function newSecret(prefix: string): { secret: string; hash: string } {
  const secret = `${prefix}${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

/** A random password for the bootstrapped admin, readable enough to type. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
