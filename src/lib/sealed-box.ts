import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Authenticated encryption for secrets at rest (certificate private keys): AES-256-GCM with a
 * 32-byte key from configuration. The output names its key id so keys can be rotated: data sealed
 * under an old key still opens while that key is configured.
 */
export interface SealingKey {
  readonly id: string;
  readonly key: Buffer;
}

export function seal(plaintext: string, key: SealingKey): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    'v1',
    key.id,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    data.toString('base64url'),
  ].join(':');
}

export function open(sealed: string, keys: readonly SealingKey[]): string {
  const [version, id, iv, tag, data] = sealed.split(':');
  if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed value');
  const key = keys.find((k) => k.id === id);
  if (!key) {
    throw new Error(
      `sealed with key "${id}", which this process does not have: give every node the same CERT_KEYS (id:key, the sealing key first)`,
    );
  }
  const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}

/** Reads `id:base64key` (32 bytes) as configured in CERT_KEYS. */
export function parseSealingKey(text: string): SealingKey {
  const [id, encoded] = text.includes(':') ? (text.split(':', 2) as [string, string]) : ['k1', text];
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== 32 || !/^[\w-]{1,32}$/.test(id)) {
    throw new Error('expected id:key with a base64 32-byte key, e.g. k1:$(openssl rand -base64 32)');
  }
  return { id, key };
}

/** The id of the key a value was sealed with, or undefined when it is not a sealed value. */
export function sealedWith(sealed: string): string | undefined {
  const [version, id] = sealed.split(':', 2);
  return version === 'v1' && id ? id : undefined;
}
