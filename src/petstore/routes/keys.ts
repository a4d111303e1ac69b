import { defineOperation, ref } from '../../lib/http-api/index.ts';
import type { Scope } from '../store/keys.ts';
import { idParam, locationHeader, type PetstoreDeps } from './shared.ts';

/** Keys are managed by admins only: through these operations or `kennel keys`. */
export const createApiKey = defineOperation<
  PetstoreDeps,
  unknown,
  unknown,
  { name: string; scopes: Scope[] }
>({
  operationId: 'createApiKey',
  method: 'POST',
  path: '/keys',
  tags: ['Admin'],
  summary: 'Create an API key',
  description:
    'Creates an API key with the given scopes. The answer holds the key itself (`secret`) this once: it is stored only as a SHA-256 hash and never logged, so keep it now.',
  access: 'admin',
  requestBody: { description: 'The new key', schema: ref('NewApiKey') },
  responses: {
    201: { description: 'The key was created', schema: ref('CreatedApiKey'), headers: locationHeader },
  },
  errors: [],
  async handler({ body }, reply, { keys }) {
    const key = await keys.create(body);
    reply.code(201).header('location', `/keys/${key.id}`).header('cache-control', 'no-store');
    return key;
  },
});

export const listApiKeys = defineOperation<PetstoreDeps>({
  operationId: 'listApiKeys',
  method: 'GET',
  path: '/keys',
  tags: ['Admin'],
  summary: 'List API keys',
  description: 'Lists every key, revoked ones included (with `revokedAt`), without their secrets.',
  access: 'admin',
  responses: {
    200: { description: 'Every key', schema: { type: 'array', items: ref('ApiKey') } },
  },
  errors: [],
  handler: (_request, _reply, { keys }) => keys.list(),
});

export const revokeApiKey = defineOperation<PetstoreDeps, { keyId: number }>({
  operationId: 'revokeApiKey',
  method: 'DELETE',
  path: '/keys/{keyId}',
  tags: ['Admin'],
  summary: 'Revoke an API key',
  description:
    'Revokes a key: from now on it answers 401 on this server (other processes on the same database stop accepting it within their key cache time, see the description). The key stays listed, with `revokedAt`. Revoking twice is harmless.',
  access: 'admin',
  parameters: [idParam('keyId', 'API key')],
  responses: { 200: { description: 'The revoked key', schema: ref('ApiKey') } },
  errors: ['key_not_found'],
  handler: ({ params }, _reply, { keys }) => keys.revoke(params.keyId),
});
