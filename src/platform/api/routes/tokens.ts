import { defineOperation, ref } from '../../../lib/http-api/index.ts';
import { createToken, listTokens, revokeToken, type TokenScope } from '../../accounts/credentials.ts';
import type { PlatformContext } from '../../context.ts';
import { actorOf } from '../auth.ts';
import { idParam } from './parameters.ts';

const TAG = ['Account'];

export const tokenRoutes = [
  defineOperation<PlatformContext>({
    operationId: 'listTokens',
    method: 'GET',
    path: '/api/v1/tokens',
    tags: TAG,
    summary: 'List your API tokens',
    description:
      'Your personal API tokens not revoked (never their secrets), each with its scope and expiry; an expired one stays listed until you revoke it.',
    responses: { 200: { description: 'Tokens', schema: { type: 'array', items: ref('Token') } } },
    errors: ['unauthenticated'],
    handler: ({ caller }, _reply, ctx) => listTokens(ctx, actorOf(caller)),
  }),
  defineOperation<
    PlatformContext,
    unknown,
    unknown,
    { name: string; expiresInDays?: number | null; scope?: TokenScope }
  >({
    operationId: 'createToken',
    method: 'POST',
    path: '/api/v1/tokens',
    tags: TAG,
    summary: 'Create an API token',
    description:
      'Creates a personal API token for the CLI and the HTTP API. The secret is in this answer only; it is stored as a hash. Optionally it expires after `expiresInDays` (then 401 `token_expired`), and `scope: read` limits it to GET and HEAD (any change answers 403 `token_read_only`), like the expiry and repository permissions of fine-grained tokens.',
    requestBody: { description: 'The token name, expiry and scope', schema: ref('NewToken') },
    responses: { 201: { description: 'The token, with its secret', schema: ref('CreatedToken') } },
    errors: ['unauthenticated', 'csrf_failed'],
    async handler({ caller, body }, reply, ctx) {
      reply.code(201);
      return createToken(ctx, actorOf(caller), body.name, {
        expiresInDays: body.expiresInDays ?? null,
        scope: body.scope ?? 'full',
      });
    },
  }),
  defineOperation<PlatformContext, { tokenId: number }>({
    operationId: 'revokeToken',
    method: 'DELETE',
    path: '/api/v1/tokens/{tokenId}',
    tags: TAG,
    summary: 'Revoke an API token',
    description: 'Revokes one of your tokens; it stops working at once.',
    parameters: [idParam('tokenId', 'Token id')],
    responses: { 204: { description: 'Revoked' } },
    errors: ['unauthenticated', 'csrf_failed', 'token_not_found'],
    async handler({ caller, params }, reply, ctx) {
      await revokeToken(ctx, actorOf(caller), params.tokenId);
      return reply.code(204).send();
    },
  }),
];
