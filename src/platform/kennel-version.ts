import { readFileSync } from 'node:fs';

/** This platform's version (package.json): sent as X-Kennel-Version, and the CLI it serves is made for it. */
export const KENNEL_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
