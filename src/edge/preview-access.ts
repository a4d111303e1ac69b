import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { Clock } from '../lib/clock.ts';
import { escapeHtml } from '../lib/html.ts';
import type { PlatformDb } from '../platform/context.ts';
import {
  exchangePreviewToken,
  PREVIEW_TOKEN_PARAM,
  previewCookieAdmits,
} from '../platform/previews/index.ts';
import { PLAIN_HTTP_PREVIEW_COOKIE, PREVIEW_COOKIE } from './edge-cookies.ts';
import { edgeErrors } from './errors.ts';
import { sendError } from './json-answer.ts';
import { platformAllowsPlainHttp } from './platform-https.ts';

/**
 * A preview host's cookie: `__Host-kennel_preview` over HTTPS (Secure, Path=/, no Domain, so
 * browsers keep it to this one host), `kennel_preview` over plain HTTP (local use), as the
 * dashboard's session cookie. Each scheme reads only its own name.
 */
export { PLAIN_HTTP_PREVIEW_COOKIE, PREVIEW_COOKIE } from './edge-cookies.ts';

const previewCookieName = (https: boolean) => (https ? PREVIEW_COOKIE : PLAIN_HTTP_PREVIEW_COOKIE);

const PRIVATE =
  'This is a private preview. Members of its team open it from the dashboard (the deploy’s “Open preview”); anyone else needs a share link from the team.';
const LINK_REFUSED =
  'This preview link opens nothing: it has expired, was revoked or was already used. Ask the team for a new link, or open the preview from the dashboard.';

export interface PreviewGateDeps {
  readonly db: PlatformDb;
  readonly clock: Clock;
  readonly platformDomain: string;
  /** The HTTPS listener's port: plain HTTP to a preview goes there, except for local domains. */
  readonly httpsPort?: number;
}

/**
 * Who may see a preview host (src/platform/previews/preview-sessions.ts has the rules): a request
 * with the host's cookie of a live grant goes on; one carrying `?kennel_preview=<token>` gets the
 * cookie and a redirect to the same URL without the token; anyone else gets the same "private
 * preview" answer whether or not the preview exists, so outsiders learn nothing from it.
 */
export class PreviewGate {
  readonly #deps: PreviewGateDeps;

  constructor(deps: PreviewGateDeps) {
    this.#deps = deps;
  }

  /**
   * Whether the request may see preview `deployId` (undefined: a preview-shaped host with no
   * preview, answered as one without access). When not, the response has been sent.
   */
  async admit(
    req: IncomingMessage,
    res: ServerResponse,
    host: string,
    deployId: number,
    requestId: string,
  ): Promise<boolean> {
    const { db, clock, platformDomain, httpsPort } = this.#deps;
    const https = (req.socket as { encrypted?: boolean }).encrypted === true;
    const url = req.url ?? '/';
    // A real platform domain's previews are HTTPS only: their tokens and cookies never go in clear.
    if (!https && httpsPort !== undefined && !platformAllowsPlainHttp(platformDomain)) {
      const port = httpsPort === 443 ? '' : `:${httpsPort}`;
      res.writeHead(308, {
        location: `https://${host}${port}${url}`,
        'content-length': 0,
        'x-request-id': requestId,
      });
      res.end();
      return false;
    }
    const query = url.indexOf('?');
    const params = new URLSearchParams(query === -1 ? '' : url.slice(query + 1));
    const token = params.get(PREVIEW_TOKEN_PARAM);
    if (token !== null) {
      const granted = await exchangePreviewToken(db, clock.now(), deployId, token);
      if (!granted) {
        refusePreview(req, res, requestId, LINK_REFUSED);
        return false;
      }
      params.delete(PREVIEW_TOKEN_PARAM);
      const rest = params.toString();
      const clean = `${query === -1 ? url : url.slice(0, query)}${rest === '' ? '' : `?${rest}`}`;
      const maxAge = Math.max(0, Math.floor((granted.expiresAt.getTime() - clock.now().getTime()) / 1000));
      res.writeHead(303, {
        location: clean,
        'set-cookie': stringifySetCookie({
          name: previewCookieName(https),
          value: granted.cookie,
          path: '/',
          maxAge,
          httpOnly: true,
          secure: https,
          sameSite: 'lax',
        }),
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
        'content-length': 0,
        'x-request-id': requestId,
      });
      res.end();
      return false;
    }
    const cookie = req.headers.cookie ? parseCookie(req.headers.cookie)[previewCookieName(https)] : undefined;
    if (cookie !== undefined && (await previewCookieAdmits(db, clock.now(), deployId, cookie))) return true;
    refusePreview(req, res, requestId, PRIVATE);
    return false;
  }
}

/**
 * 401 `preview_private`: an HTML page for browsers, the Error body otherwise. The challenge names
 * the cookie scheme (RFC 9110 wants one with every 401); no page of the preview, nor whether it
 * exists, is in it.
 */
function refusePreview(req: IncomingMessage, res: ServerResponse, requestId: string, message: string): void {
  const error = edgeErrors.error('preview_private', message, {
    headers: { 'www-authenticate': 'Cookie realm="kennel-preview"', 'cache-control': 'no-store' },
  });
  if (!(req.headers.accept ?? '').includes('text/html')) {
    sendError(res, error, requestId);
    return;
  }
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Private preview</title>
<meta name="robots" content="noindex">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1d2433}</style></head>
<body><h1>Private preview</h1><p>${escapeHtml(message)}</p></body></html>`;
  res.writeHead(error.status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'x-request-id': requestId,
    ...error.headers,
  });
  res.end(html);
}
