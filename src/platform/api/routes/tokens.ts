import { ref } from '../../../lib/http-api/index.ts';
import { createToken, listTokens, revokeToken } from '../../accounts/credentials.ts';
import { actorOf } from '../auth.ts';
import { managementOperation } from '../operation.ts';
import { answerCreated, created, forCaller, noContent, ok, thenNoContent } from './answers.ts';
import { idParam } from './parameters.ts';

const TAG = ['Account'];

export const tokenRoutes = [
  managementOperation({
    operationId: 'listTokens',
    method: 'GET',
    path: '/api/v1/tokens',
    tags: TAG,
    summary: 'List your API tokens',
    description:
      'Your personal API tokens not revoked (never their secrets), each with its scope and expiry; an expired one stays listed until you revoke it.',
    responses: ok('Tokens', ['Token']),
    errors: ['unauthenticated'],
    handler: forCaller(listTokens),
  }),
  managementOperation({
    operationId: 'createToken',
    method: 'POST',
    path: '/api/v1/tokens',
    tags: TAG,
    summary: 'Create an API token',
    description:
      'Creates a personal API token for the CLI and the HTTP API. The secret is in this answer only; it is stored as a hash. Optionally it expires after `expiresInDays` (then 401 `token_expired`), and `scope: read` limits it to GET and HEAD (any change answers 403 `token_read_only`), like the expiry and repository permissions of fine-grained tokens.',
    requestBody: { description: 'The token name, expiry and scope', schema: ref('NewToken') },
    responses: created('The token, with its secret', 'CreatedToken'),
    errors: ['unauthenticated', 'csrf_failed'],
    handler: answerCreated(({ caller, body }, ctx) =>
      createToken(ctx, actorOf(caller), body.name, {
        expiresInDays: body.expiresInDays ?? null,
        scope: body.scope ?? 'full',
      }),
    ),
  }),
  managementOperation({
    operationId: 'revokeToken',
    method: 'DELETE',
    path: '/api/v1/tokens/{tokenId}',
    tags: TAG,
    summary: 'Revoke an API token',
    description: 'Revokes one of your tokens; it stops working at once.',
    parameters: [idParam('tokenId', 'Token id')],
    responses: noContent('Revoked'),
    errors: ['unauthenticated', 'csrf_failed', 'token_not_found'],
    handler: thenNoContent(({ caller, params }, ctx) => revokeToken(ctx, actorOf(caller), params.tokenId)),
  }),
];
