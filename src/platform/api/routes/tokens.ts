import { defineOperation, ref } from '../../../lib/http-api/index.ts';
import { createToken, listTokens, revokeToken } from '../../accounts/credentials.ts';
import type { PlatformContext } from '../../context.ts';
import { actorOf } from '../auth.ts';

const TAG = ['Account'];

export const tokenRoutes = [
  defineOperation<PlatformContext>({
    operationId: 'listTokens',
    method: 'GET',
    path: '/api/v1/tokens',
    tags: TAG,
    summary: 'List your API tokens',
    description: 'Your live personal API tokens (never their secrets).',
    responses: { 200: { description: 'Tokens', schema: { type: 'array', items: ref('Token') } } },
    errors: ['unauthenticated'],
    handler: ({ caller }, _reply, ctx) => listTokens(ctx, actorOf(caller)),
  }),
  defineOperation<PlatformContext, unknown, unknown, { name: string }>({
    operationId: 'createToken',
    method: 'POST',
    path: '/api/v1/tokens',
    tags: TAG,
    summary: 'Create an API token',
    description:
      'Creates a personal API token for the CLI and the HTTP API. The secret is in this answer only; it is stored as a hash.',
    requestBody: { description: 'The token name', schema: ref('NewToken') },
    responses: { 201: { description: 'The token, with its secret', schema: ref('CreatedToken') } },
    errors: ['unauthenticated', 'csrf_failed'],
    async handler({ caller, body }, reply, ctx) {
      reply.code(201);
      return createToken(ctx, actorOf(caller), body.name);
    },
  }),
  defineOperation<PlatformContext, { tokenId: number }>({
    operationId: 'revokeToken',
    method: 'DELETE',
    path: '/api/v1/tokens/{tokenId}',
    tags: TAG,
    summary: 'Revoke an API token',
    description: 'Revokes one of your tokens; it stops working at once.',
    parameters: [
      { name: 'tokenId', in: 'path', description: 'Token id', schema: { type: 'integer', minimum: 1 } },
    ],
    responses: { 204: { description: 'Revoked' } },
    errors: ['unauthenticated', 'csrf_failed', 'token_not_found'],
    async handler({ caller, params }, reply, ctx) {
      await revokeToken(ctx, actorOf(caller), params.tokenId);
      return reply.code(204).send();
    },
  }),
];
