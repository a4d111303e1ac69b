import { ref } from '../../../lib/http-api/index.ts';
import { grantOrigin, listOriginGrants, revokeOriginGrant } from '../../projects/origin-grants.ts';
import { actorOf } from '../auth.ts';
import { managementOperation } from '../operation.ts';
import { forCaller, noContent, ok, thenNoContent } from './answers.ts';
import { idParam } from './parameters.ts';

const TAG = ['Origin grants'];

export const originGrantRoutes = [
  managementOperation({
    operationId: 'listOriginGrants',
    method: 'GET',
    path: '/api/v1/origin-grants',
    tags: TAG,
    summary: 'List origin grants',
    description:
      "Platform admins only. Which team's projects may reach which private origin (KENNEL_ORIGIN_ALLOWLIST: every origin of that setting).",
    access: 'admin',
    responses: ok('The grants, oldest first', ['OriginGrant']),
    errors: ['unauthenticated', 'forbidden'],
    handler: forCaller(listOriginGrants),
  }),
  managementOperation({
    operationId: 'grantOrigin',
    method: 'POST',
    path: '/api/v1/origin-grants',
    tags: TAG,
    summary: 'Grant a team a private origin',
    description:
      "Platform admins only. The team's projects may then use the origin (scheme://host:port) although it is not a public address; other teams may not use its host. Granting an existing grant answers it with 200.",
    access: 'admin',
    requestBody: { description: 'The team and the origin', schema: ref('NewOriginGrant') },
    responses: {
      200: { description: 'Granted already', schema: ref('OriginGrant') },
      201: { description: 'The grant', schema: ref('OriginGrant') },
    },
    errors: ['unauthenticated', 'csrf_failed', 'forbidden', 'team_not_found'],
    async handler({ caller, body }, reply, ctx) {
      const { grant, created } = await grantOrigin(ctx, actorOf(caller), body);
      reply.code(created ? 201 : 200);
      return grant;
    },
  }),
  managementOperation({
    operationId: 'revokeOriginGrant',
    method: 'DELETE',
    path: '/api/v1/origin-grants/{grantId}',
    tags: TAG,
    summary: 'Revoke an origin grant',
    description:
      "Platform admins only. The team's projects on that origin stop being forwarded at once, on every edge node, and may not be pointed at it again.",
    access: 'admin',
    parameters: [idParam('grantId', 'Grant id')],
    responses: noContent('Revoked'),
    errors: ['unauthenticated', 'csrf_failed', 'forbidden', 'origin_grant_not_found'],
    handler: thenNoContent(({ caller, params }, ctx) =>
      revokeOriginGrant(ctx, actorOf(caller), params.grantId),
    ),
  }),
];
