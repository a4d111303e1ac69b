import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * The baseline: a bare `node:http` server answering what the server it stands in for answers.
 * Run as its own process (pinned like the server under test):
 *
 *   PORT=4100 BARE_RESPONSES=responses.json node bench/bare-server.ts
 *
 * BARE_RESPONSES names a JSON file of canned answers (`BareResponses`): fixed ones, served as
 * stored for an exact method and URL, and echo-orders, which read and parse the JSON body and
 * answer an order made from it with a new id each time (the work a handler does without a
 * database).
 */
export interface BareResponses {
  readonly fixed: readonly CannedResponse[];
  readonly orders: readonly OrderRoute[];
}

export interface CannedResponse {
  readonly method: string;
  /** Path and query, exactly as the client sends it. */
  readonly url: string;
  readonly status: number;
  /** Headers besides Content-Length, Date and Connection (node:http adds those). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface OrderRoute {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  /** Headers besides Content-Length and Location. */
  readonly headers: Readonly<Record<string, string>>;
  /** Prefix of the Location header; the new id is appended. */
  readonly locationPrefix: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export function bareHandler(responses: BareResponses): Handler {
  const routes = new Map<string, Handler>();
  for (const canned of responses.fixed) {
    // A string body goes out in one write with the head; a Buffer would take a writev of two.
    const body = canned.body;
    const headers = { ...canned.headers, 'content-length': String(Buffer.byteLength(body)) };
    routes.set(`${canned.method} ${canned.url}`, (_req, res) => {
      res.writeHead(canned.status, headers);
      res.end(body);
    });
  }
  let nextId = 1;
  for (const route of responses.orders) {
    routes.set(`${route.method} ${route.url}`, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        let input: { petId?: unknown; quantity?: unknown };
        try {
          input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' });
          res.end('{"code":"malformed_json","message":"The body is not valid JSON.","status":400}');
          return;
        }
        const id = nextId++;
        const body = JSON.stringify({ id, petId: input.petId, quantity: input.quantity, complete: false });
        res.writeHead(route.status, {
          location: `${route.locationPrefix}${id}`,
          ...route.headers,
          'content-length': String(Buffer.byteLength(body)),
        });
        res.end(body);
      });
    });
  }
  return (req, res) => {
    const handler = routes.get(`${req.method} ${req.url}`);
    if (handler) return handler(req, res);
    res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
    res.end('{"code":"route_not_found","message":"Not a benchmarked URL.","status":404}');
  };
}

function main(): void {
  const file = process.env.BARE_RESPONSES;
  if (!file) {
    console.error('BARE_RESPONSES must name a JSON file of canned responses');
    process.exit(2);
  }
  const responses = JSON.parse(readFileSync(file, 'utf8')) as BareResponses;
  const server = createServer(bareHandler(responses));
  const shutdown = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  server.listen(Number(process.env.PORT ?? 4100), process.env.HOST ?? '127.0.0.1');
}

if (import.meta.main) main();
