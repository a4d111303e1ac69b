import { hash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { HeaderSpec, ParameterSpec, ResponseSpec } from '../../lib/http-api/index.ts';
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

export const ifNoneMatchParam: ParameterSpec = {
  name: 'If-None-Match',
  in: 'header',
  description:
    'The ETags you hold (from an earlier read): while the resource still has one of them the answer is 304 Not Modified, without a body; `*` matches any existing version.',
  schema: { type: 'string', minLength: 1, maxLength: 1000 },
};

export const notModifiedResponse: ResponseSpec = {
  description: 'Not modified: the resource still has an ETag sent in If-None-Match (no body)',
  headers: etagHeader,
};

/**
 * A read's answer: the resource with its ETag, or 304 without a body when If-None-Match names
 * that ETag (weak comparison, RFC 9110: `W/"x"` matches `"x"`).
 */
export function sendTagged<T>(
  reply: FastifyReply,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  resource: T,
): T | FastifyReply {
  const etag = etagOf(resource);
  reply.header('etag', etag);
  const header = headers['if-none-match'];
  if (header === undefined) return resource;
  const tags = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''));
  return tags.includes(etag) || tags.includes('*') ? reply.code(304).send() : resource;
}

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
        `${what} changed since you read it: If-Match names none of its current ETags (it is now ${now}). Read it again and apply your change to what it says now.`,
      );
    }
  };
}
