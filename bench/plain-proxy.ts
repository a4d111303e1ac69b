import { createServer } from 'node:http';
import { Pool } from 'undici';

/**
 * The `edge` suite's plain Node.js proxy: what a reverse proxy in Node.js costs with nothing of
 * the edge's own (no routing by Host, no forwarding headers, no request id). Like the edge it
 * keeps connections to the origin alive in an undici Pool and strips the `/api` prefix.
 *
 *   PORT=… ORIGIN_URL=http://127.0.0.1:… node bench/plain-proxy.ts
 */
const origin = process.env.ORIGIN_URL;
if (!origin) throw new Error('ORIGIN_URL is required');
const pool = new Pool(origin, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const { host: _host, connection: _connection, ...headers } = req.headers;
  pool
    .request({
      method: (req.method ?? 'GET') as 'GET',
      path: url.startsWith('/api/') ? url.slice(4) : url,
      headers: headers as Record<string, string>,
      body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
    })
    .then(
      (answer) => {
        const { connection: _c, 'keep-alive': _k, 'transfer-encoding': _t, ...out } = answer.headers;
        res.writeHead(answer.statusCode, out as Record<string, string>);
        answer.body.pipe(res);
      },
      () => {
        res.writeHead(502).end();
      },
    );
});
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  void pool.close().finally(() => process.exit(0));
});
