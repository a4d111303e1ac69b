import type { FastifyReply } from 'fastify';
import type { HeaderSpec, ParameterSpec, ResponseSpec } from '../../lib/http-api/index.ts';
import { petstoreErrors } from '../errors.ts';
import { INTERFACE_VERSION } from '../interface-version.ts';
import type { VersionCheck, Versioned } from '../store/index.ts';
import { stringHeader } from './shared.ts';

/** The resources with ETags; the kind keeps a pet's tag from ever naming a category. */
export type TaggedKind = 'pet' | 'category' | 'order' | 'inventory';

/**
 * Strong ETags from row versions, `"pet-3-v2@1.0.0"`: no hash of the body on the read path. The
 * interface version is part of it because the representation is too: a 1.x release may add a
 * response field to an unchanged row, and a tag must not then stand for both bodies.
 */
export function etagOf(kind: TaggedKind, id: number, version: number): string {
  return `"${kind}-${id}-v${version}${TAG_END}`;
}

const TAG_END = `@${INTERFACE_VERSION}"`;

export const etagHeader: Record<string, HeaderSpec> = {
  ETag: stringHeader('The version of the resource (strong); send it back in If-Match to change it safely'),
};

/** A request header that names ETags. */
const tagsParam = (name: string, description: string): ParameterSpec => ({
  name,
  in: 'header',
  description,
  schema: { type: 'string', minLength: 1, maxLength: 1000 },
});

export const ifMatchParam = tagsParam(
  'If-Match',
  'Only change the resource if it still has one of these ETags (from a read or an earlier change), else 412 `precondition_failed`; `*` matches any existing version.',
);

export const ifNoneMatchParam = tagsParam(
  'If-None-Match',
  'The ETags you hold (from an earlier read): while the resource still has one of them the answer is 304 Not Modified, without a body; `*` matches any existing version.',
);

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
  kind: TaggedKind,
  id: number,
  { resource, version }: Versioned<T>,
): T | FastifyReply {
  const etag = etagOf(kind, id, version);
  reply.header('etag', etag);
  const header = headers['if-none-match'];
  if (header === undefined) return resource;
  const tags = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''));
  return tags.includes(etag) || tags.includes('*') ? reply.code(304).send() : resource;
}

/** A change's answer: the resource as changed, with its new ETag. */
export function sendChanged<T>(reply: FastifyReply, kind: TaggedKind, id: number, changed: Versioned<T>): T {
  reply.header('etag', etagOf(kind, id, changed.version));
  return changed.resource;
}

/**
 * The If-Match check to run on the row's version as it is inside the change's transaction (row
 * locked), or undefined without If-Match. Weak tags never match (If-Match compares strongly,
 * RFC 9110).
 */
export function ifMatchCheck(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  kind: TaggedKind,
  id: number,
  what: string,
): VersionCheck | undefined {
  const header = headers['if-match'];
  if (header === undefined) return undefined;
  const tags = (Array.isArray(header) ? header.join(',') : header).split(',').map((t) => t.trim());
  if (tags.includes('*')) return () => {};
  return (version) => {
    const now = etagOf(kind, id, version);
    if (!tags.includes(now)) {
      throw petstoreErrors.error(
        'precondition_failed',
        `${what} changed since you read it: If-Match names none of its current ETags (it is now ${now}). Read it again and apply your change to what it says now.`,
      );
    }
  };
}
