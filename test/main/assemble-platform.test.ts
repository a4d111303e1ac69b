import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { originGuard } from '../../src/edge/index.ts';
import { buildManagementApp } from '../../src/platform/api/app.ts';
import { TEST_POSTGRES_URL, testDialects } from '../support/databases.ts';
import { requestAs } from '../support/http.ts';
import { startTestNode, type TestNode } from '../support/test-node.ts';

/** What a new connection to a loopback port meets: `connected`, or the error's code. */
const connectTo = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

/**
 * One assembly of a platform node (src/main/assemble-platform.ts), as `npm start`, the tests and
 * startTestNode run it: it serves the dashboard it registers, stops every part it started, and a
 * start that fails stops what had started.
 */
for (const dialect of testDialects()) {
  describe(`assemblePlatform (${dialect})`, () => {
    const running: TestNode[] = [];
    after(async () => {
      for (const node of running) await node.stop().catch(() => {});
    });

    it('serves the dashboard at the platform domain (the management app alone has none), then stops every part', async () => {
      const node = await startTestNode(dialect);
      running.push(node);
      const page = await requestAs(node.httpPort, 'platform.test', '/', { headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      const alone = buildManagementApp(node.ctx);
      const missing = await alone.inject({ url: '/', headers: { accept: 'text/html' } });
      await alone.close();
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().code, 'route_not_found');
      assert.equal((await requestAs(node.httpPort, 'platform.test', '/readyz')).status, 200);

      await node.stop();
      assert.equal(await connectTo(node.httpPort), 'ECONNREFUSED');
      assert.equal(await connectTo(node.httpsPort), 'ECONNREFUSED');
      await assert.rejects(node.ctx.db.selectFrom('users').select('id').execute(), 'the database is closed');
    });

    // The HTTPS port, bound first by the edge: the parts started before it (databases, app, jobs)
    // must be stopped, or this file's process would not end.
    it('a taken port fails the start naming the port and its setting; what had started is stopped', async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as AddressInfo).port;
      try {
        await assert.rejects(startTestNode(dialect, { env: { HTTPS_PORT: String(port) } }), {
          name: 'Error',
          message: `Port ${port} is already in use (HTTPS_PORT): stop what listens on it, or set HTTPS_PORT to a free port.`,
          setting: 'HTTPS_PORT',
          port,
        });
      } finally {
        taken.close();
      }
    });

    it('takes what a benchmark or a test sets: the app’s version, an edge guard made from the node’s context, no jobs', async () => {
      let given: unknown;
      const relayName = `relay_${randomBytes(4).toString('hex')}`;
      const node = await startTestNode(dialect, {
        app: { version: '9.9.9' },
        edge: (ctx) => {
          given = ctx;
          return { guard: originGuard({ allowlist: [] }) };
        },
        jobs: false,
        changeRelay: { url: `${TEST_POSTGRES_URL}?application_name=${relayName}` },
      });
      running.push(node);
      const page = await requestAs(node.httpPort, 'platform.test', '/readyz');
      assert.equal(page.status, 200);
      assert.equal(given, node.ctx, 'the edge override is called with the node’s context');
      const api = await requestAs(node.httpPort, 'platform.test', '/api/v1/session');
      assert.equal(api.headers['x-kennel-version'], '9.9.9');
      if (dialect === 'postgres') {
        // Jobs off: no change relay either (its session would carry the URL's application name).
        const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
        await admin.connect();
        try {
          const { rows } = await admin.query(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
            [relayName],
          );
          assert.equal((rows[0] as { n: number }).n, 0);
        } finally {
          await admin.end();
        }
      }
      await node.stop();
    });
  });
}
