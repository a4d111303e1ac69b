import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { buildManagementApp } from '../../src/platform/api/app.ts';
import { testDialects } from '../support/databases.ts';
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
  });
}
