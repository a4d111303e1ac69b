import { hash } from 'node:crypto';
import type { HeaderSpec, ParameterSpec } from '../../lib/http-api/index.ts';
import { petstoreErrors } from '../errors.ts';

/**
 * Strong ETags from the representation itself: a hash of the JSON the server sends. Any change
 * a client could see (a pet's status moving with stock included) changes the tag, without a
 * version column on every table or a bump in every write path.
 */
export function etagOf(resource: unknown): string {
  // The one-shot hash(): no Hash object per read.
  return `"${hash('sha256', JSON.stringify(resource), 'base64url').slice(0, 27)}"`;
}

export const etagHeader: Record<string, HeaderSpec> = {
  ETag: {
    description: 'The version of the resource (strong); send it back in If-Match to change it safely',
    schema: { type: 'string' },
  },
};

export const ifMatchParam: ParameterSpec = {
  name: 'If-Match',
  in: 'header',
  description:
    'Only change the resource if it still has one of these ETags (from a read or an earlier change), else 412 `precondition_failed`; `*` matches any existing version.',
  schema: { type: 'string', minLength: 1, maxLength: 1000 },
};

/**
 * The If-Match check to run on the resource as it is inside the change's transaction, or
 * undefined without If-Match. Weak tags never match (If-Match compares strongly, RFC 9110).
 */
export function ifMatchCheck<T>(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  what: string,
): ((current: T) => void) | undefined {
  const header = headers['if-match'];
  if (header === undefined) return undefined;
  const tags = (Array.isArray(header) ? header.join(',') : header).split(',').map((t) => t.trim());
  if (tags.includes('*')) return () => {};
  return (current) => {
    const now = etagOf(current);
    if (!tags.includes(now)) {
      throw petstoreErrors.error(
        'precondition_failed',
        `${what} changed since you read it (If-Match ${tags.join(', ')}; it is now ${now}). Read it again and apply your change to what it says now.`,
      );
    }
  };
}
