import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseSealingKey, type SealingKey } from './sealed-box.ts';

/**
 * Sealing keys from configuration (`id:base64key`, the first seals), or for a single node a key
 * file in the data directory, created on first start with mode 0600. Several processes sharing a
 * database must be given the same configured keys.
 */
export function sealingKeysOrFile(
  configured: readonly string[],
  dataDir: string,
  fileName: string,
): SealingKey[] {
  if (configured.length > 0) return configured.map(parseSealingKey);
  mkdirSync(resolve(dataDir), { recursive: true });
  const file = join(resolve(dataDir), fileName);
  if (!existsSync(file)) {
    writeFileSync(file, `local-${randomBytes(3).toString('hex')}:${randomBytes(32).toString('base64')}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
  }
  return [parseSealingKey(readFileSync(file, 'utf8').trim())];
}
