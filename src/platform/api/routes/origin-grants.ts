import { grantOrigin, listOriginGrants, revokeOriginGrant } from '../../projects/origin-grants.ts';
import { actorOf } from '../auth.ts';
import { operations } from '../operation.ts';
import { forCaller, passing, thenNoContent } from './answers.ts';
import { created, jsonBody, noContent, ok } from './contract.ts';

export const originGrantRoutes = operations('Origin grants', {
  listOriginGrants: {
    route: 'GET /api/v1/origin-grants',
    summary: 'List origin grants',
    description:
      "Platform admins only. Which team's projects may reach which private origin (KENNEL_ORIGIN_ALLOWLIST: every origin of that setting).",
    access: 'admin',
    responses: ok('The grants, oldest first', ['OriginGrant']),
    handler: forCaller(listOriginGrants),
  },
  grantOrigin: {
    route: 'POST /api/v1/origin-grants',
    summary: 'Grant a team a private origin',
    description:
      "Platform admins only. The team's projects may then use the origin (scheme://host:port) although it is not a public address; other teams may not use its host. Granting an existing grant answers it with 200.",
    access: 'admin',
    requestBody: jsonBody('The team and the origin', 'NewOriginGrant'),
    responses: { ...ok('Granted already', 'OriginGrant'), ...created('The grant', 'OriginGrant') },
    errors: ['team_not_found'],
    async handler({ caller, body }, reply, ctx) {
      const { grant, created } = await grantOrigin(ctx, actorOf(caller), body);
      reply.code(created ? 201 : 200);
      return grant;
    },
  },
  revokeOriginGrant: {
    route: 'DELETE /api/v1/origin-grants/{grantId}',
    summary: 'Revoke an origin grant',
    description:
      "Platform admins only. The team's projects on that origin stop being forwarded at once, on every edge node, and may not be pointed at it again.",
    access: 'admin',
    responses: noContent('Revoked'),
    handler: thenNoContent(passing('grantId')(revokeOriginGrant)),
  },
});
