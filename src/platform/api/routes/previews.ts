import { ref } from '../../../lib/http-api/index.ts';
import {
  createPreviewLink,
  listPreviewLinks,
  PREVIEW_LINK_LIFETIME,
  PREVIEW_TOKEN_PARAM,
  previewLinkUrl,
  revokePreviewLink,
  startPreviewHandoff,
} from '../../previews/index.ts';
import { actorOf } from '../auth.ts';
import { operations } from '../operation.ts';
import { platformAddress } from '../platform-address.ts';
import { passing, thenNoContent } from './answers.ts';
import { created, idParam, jsonBody, noContent, ok } from './contract.ts';

/** The path's deploy is a preview's; a deploy that is none answers deploy_not_preview. */
const parameters = [idParam('deployId', 'Deploy id of a preview')];
const errors = ['deploy_not_preview'] as const;

/** Preview deploys' private addresses: the members' hand-off and share links (docs/platform-api.md). */
export const previewRoutes = operations('Projects', {
  openPreview: {
    route: 'GET /api/v1/projects/{slug}/deploys/{deployId}/preview-access',
    summary: 'Open a preview',
    description: `Hands a member of the project's team (or a platform admin) over to the preview's private address, <slug>--<deployId>.<platform domain>, with a one-time token (\`?${PREVIEW_TOKEN_PARAM}=kph_…\`, valid one minute) that the preview host exchanges for a cookie of its own and drops from the URL. A browser (Accept: text/html) gets 303 to that address; other clients get the address as JSON, to open in a browser. The dashboard's "Open preview" is a link here; the dashboard's cookie itself never reaches the preview host.`,
    parameters,
    responses: {
      200: {
        description: 'The hand-off address, for a client that opens it itself',
        schema: ref('PreviewAccess'),
      },
      303: {
        description: 'To the preview host, with the hand-off token (a browser)',
        schema: ref('PreviewAccess'),
        headers: {
          Location: { description: 'The same URL as `url`', schema: { type: 'string', format: 'uri' } },
        },
      },
    },
    errors,
    async handler({ caller, params, headers }, reply, ctx) {
      const handoff = await startPreviewHandoff(ctx, actorOf(caller), params.slug, params.deployId);
      const url = previewLinkUrl(
        platformAddress(reply.request, ctx.config.platformDomain),
        handoff.host,
        handoff.token,
      );
      reply.header('cache-control', 'no-store');
      if (String(headers.accept ?? '').includes('text/html')) reply.code(303).header('location', url);
      return { url, expiresAt: handoff.expiresAt };
    },
  },
  createPreviewLink: {
    route: 'POST /api/v1/projects/{slug}/deploys/{deployId}/links',
    summary: 'Share a preview',
    description: `Makes a share link for a preview deploy: whoever opens it sees the preview (its reference and its API) until it expires (\`expiresIn\`, ${PREVIEW_LINK_LIFETIME.minSeconds} s to ${PREVIEW_LINK_LIFETIME.maxSeconds / 86_400} days, a week by default) or a team member revokes it. Any member of the project's team may make one. The token is in this answer only; it is stored as a hash.`,
    parameters,
    requestBody: jsonBody('How long the link lives', 'NewPreviewLink'),
    responses: created('The link, with its secret', 'CreatedPreviewLink'),
    errors,
    async handler({ caller, params, body }, reply, ctx) {
      const link = await createPreviewLink(
        ctx,
        actorOf(caller),
        params.slug,
        params.deployId,
        body?.expiresIn ?? PREVIEW_LINK_LIFETIME.defaultSeconds,
      );
      reply.code(201);
      return {
        ...link,
        url: previewLinkUrl(platformAddress(reply.request, ctx.config.platformDomain), link.host, link.token),
      };
    },
  },
  listPreviewLinks: {
    route: 'GET /api/v1/projects/{slug}/deploys/{deployId}/links',
    summary: "A preview's share links",
    description:
      'Every share link of the preview, newest first, revoked and expired ones included (never their secrets).',
    parameters,
    responses: ok('Links', ['PreviewLink']),
    errors,
    handler: passing('slug', 'deployId')(listPreviewLinks),
  },
  revokePreviewLink: {
    route: 'DELETE /api/v1/projects/{slug}/deploys/{deployId}/links/{linkId}',
    summary: 'Revoke a share link',
    description:
      'The link stops opening the preview at once, and so do the browsers it was opened in (their next request).',
    parameters,
    responses: noContent('Revoked'),
    errors,
    handler: thenNoContent(passing('slug', 'deployId', 'linkId')(revokePreviewLink)),
  },
});
