import type { IncomingMessage, ServerResponse } from 'node:http';
import { ACME_LABEL, CHALLENGE_PREFIX, type EdgeExchange } from '../edge-exchange.ts';
import { type EdgeParts, isEncrypted } from './parts.ts';

/** Whether the request is an ACME http-01 check: plain HTTP, for any host, when the edge answers them. */
export function isChallenge(edge: EdgeParts, req: IncomingMessage): boolean {
  return (
    (req.url ?? '/').startsWith(CHALLENGE_PREFIX) && edge.deps.challenges !== undefined && !isEncrypted(req)
  );
}

/** Step 1, challenge: the key authorization for the token, or 404 when the edge has none. */
export async function challenge(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
): Promise<void> {
  exchange.project = ACME_LABEL;
  const token = (req.url ?? '/').slice(CHALLENGE_PREFIX.length).split('?')[0] ?? '';
  const answer = await edge.deps.challenges?.answer(token);
  res.writeHead(answer === undefined ? 404 : 200, {
    'content-type': 'text/plain',
    'x-request-id': exchange.requestId,
  });
  res.end(answer ?? 'no such challenge');
}
