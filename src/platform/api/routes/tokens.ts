import { createToken, listTokens, revokeToken } from '../../accounts/credentials.ts';
import { actorOf } from '../auth.ts';
import { operations } from '../operation.ts';
import { answerCreated, forCaller, passing, thenNoContent } from './answers.ts';
import { created, jsonBody, noContent, ok } from './contract.ts';

export const tokenRoutes = operations('Account', {
  listTokens: {
    route: 'GET /api/v1/tokens',
    summary: 'List your API tokens',
    description:
      'Your personal API tokens not revoked (never their secrets), each with its scope and expiry; an expired one stays listed until you revoke it.',
    responses: ok('Tokens', ['Token']),
    handler: forCaller(listTokens),
  },
  createToken: {
    route: 'POST /api/v1/tokens',
    summary: 'Create an API token',
    description:
      'Creates a personal API token for the CLI and the HTTP API. The secret is in this answer only; it is stored as a hash. Optionally it expires after `expiresInDays` (then 401 `token_expired`), and `scope: read` limits it to GET and HEAD (any change answers 403 `token_read_only`), like the expiry and repository permissions of fine-grained tokens.',
    requestBody: jsonBody('The token name, expiry and scope', 'NewToken'),
    responses: created('The token, with its secret', 'CreatedToken'),
    handler: answerCreated(({ caller, body }, _reply, ctx) =>
      createToken(ctx, actorOf(caller), body.name, {
        expiresInDays: body.expiresInDays ?? null,
        scope: body.scope ?? 'full',
      }),
    ),
  },
  revokeToken: {
    route: 'DELETE /api/v1/tokens/{tokenId}',
    summary: 'Revoke an API token',
    description: 'Revokes one of your tokens; it stops working at once.',
    responses: noContent('Revoked'),
    handler: thenNoContent(passing('tokenId')(revokeToken)),
  },
});
