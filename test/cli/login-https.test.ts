import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { buildManagementApp } from '../../src/platform/api/app.ts';
import { CertificateStore } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { kennelProcess as kennel, tempDir, USERS } from './harness.ts';

/**
 * Over HTTPS the platform names its session cookie `__Host-kennel_session`: `kennel login`, which
 * signs in with the cookie only to create its API token, must pick that name up too.
 */
for (const dialect of testDialects()) {
  describe(`kennel login over HTTPS (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let server: Server;
    let url: string;
    const dir = tempDir();

    before(async () => {
      p = await startPlatformContext(dialect);
      p.clock.set(Date.now());
      await createUser(p.ctx, USERS.owner);
      const store = new CertificateStore(p.ctx.db, [
        parseSealingKey(`k1:${Buffer.alloc(32, 4).toString('base64')}`),
      ]);
      const ca = await store.internalCa(p.clock.now());
      const certificate = await new InternalIssuer(ca).issue('localhost');
      writeFileSync(join(dir.path, 'ca.pem'), ca.certificatePem);
      app = buildManagementApp(p.ctx);
      await app.ready();
      // TLS in front of the app as the edge puts it: the app sees the encrypted socket.
      server = createServer(
        { cert: certificate.certificatePem, key: certificate.privateKeyPem },
        (req, res) => app.routing(req, res),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `https://localhost:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      server?.closeAllConnections();
      server?.close();
      await app?.close();
      await p?.close();
      dir.remove();
    });

    it('signs in with the __Host- cookie, saves a token and ends the session', async () => {
      const result = await kennel(['login', '--email', USERS.owner.email, '--password-stdin'], {
        env: {
          KENNEL_URL: url,
          KENNEL_CONFIG_DIR: dir.path,
          NODE_EXTRA_CA_CERTS: join(dir.path, 'ca.pem'),
        },
        input: `${USERS.owner.password}\n`,
      });
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      assert.match(result.stdout, /Signed in to https:\/\/localhost:\d+ as owner@x\.test/);
      const saved = JSON.parse(readFileSync(join(dir.path, 'credentials.json'), 'utf8')) as { token: string };
      assert.match(saved.token, /^knl_/);
      // The cookie session only served to create the token, and was ended.
      const sessions = await p.ctx.db.selectFrom('sessions').select('id_hash').execute();
      assert.deepEqual(sessions, []);
    });
  });
}
