import { hkdfSync } from 'node:crypto';
import type { SealingKey } from '../../lib/sealed-box.ts';

/**
 * The key of traffic's caller hashes (HMAC-SHA256), derived with HKDF from the platform's sealing
 * key (CERT_KEYS' first, or the key file of a single node): every node given the same CERT_KEYS
 * hashes a credential alike, and no new secret has to be configured. Rotating CERT_KEYS' first key
 * changes the hashes from then on (a caller then shows as a new one); the key never leaves memory.
 */
export function trafficKey(keys: readonly SealingKey[]): Buffer {
  const first = keys[0];
  if (first === undefined) throw new Error('traffic needs a sealing key (CERT_KEYS or the key file)');
  return Buffer.from(hkdfSync('sha256', first.key, Buffer.alloc(0), 'kennel traffic caller v1', 32));
}
