import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ApiClient } from '../../src/cli/api-client.ts';
import { CliError } from '../../src/cli/errors.ts';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';
import { type CliResult, type CliServer, kennel, startCliServer, tempDir, USERS } from './harness.ts';

function show(result: CliResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** A real HTTP server on a loopback port answering every request with `answer`. */
async function plainServer(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{
  address: string;
  server: Server;
}> {
  const server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const signIn = (address: string, config: string) =>
  kennel(['login', '--server', address, '--email', USERS.owner.email, '--password-stdin'], {
    env: { KENNEL_CONFIG_DIR: config },
    input: USERS.owner.password,
  });

describe('kennel against a server that is not Kennel', () => {
  const config = tempDir();
  const servers: Server[] = [];
  let html404 = '';
  let otherJson = '';
  let otherApi = '';
  let proxied = '';

  before(async () => {
    const html = await plainServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
    });
    const json = await plainServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","items":[]}');
    });
    const api = await plainServer((req, res) => {
      if (req.url === '/api/v1/openapi.json') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"openapi":"3.0.3","info":{"title":"Billing API","version":"2"},"paths":{}}');
      } else res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    });
    // A proxy in front of a real platform: its document passes through, its own pages do not.
    const fronted = await plainServer((req, res) => {
      if (req.url === '/api/v1/openapi.json') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"openapi":"3.0.3","info":{"title":"Kennel management API","version":"1.0.0"},"paths":{}}');
      } else if (req.url === '/api/v1/teams') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Please sign in to the VPN</h1>');
      } else res.writeHead(413, { 'content-type': 'text/html' }).end('<h1>413 Request Entity Too Large</h1>');
    });
    servers.push(html.server, json.server, api.server, fronted.server);
    [html404, otherJson, otherApi, proxied] = [html.address, json.address, api.address, fronted.address];
  });
  after(() => {
    for (const server of servers) server.close();
    config.remove();
  });

  it('says so when it answers 404 in HTML: at sign-in and with a token, exit 4', async () => {
    const login = await signIn(html404, config.path);
    assert.equal(login.code, 4, show(login));
    assert.equal(
      login.stderr,
      `error: http://${html404} is not a Kennel server: POST /api/v1/session answered 404 (text/html), and GET /api/v1/openapi.json answered 404, not the Kennel management API's document. Check the address (--server, or the variable that sets it) and its port. (not_kennel)\n`,
    );
    const list = await kennel(['projects', 'list'], {
      env: { KENNEL_CONFIG_DIR: config.path, KENNEL_URL: html404, KENNEL_TOKEN: 'knl_x' },
    });
    assert.equal(list.code, 4, show(list));
    assert.match(list.stderr, /is not a Kennel server: GET \/api\/v1\/projects answered 404 \(text\/html\)/);
  });

  it('says so when it answers 200 with JSON of another shape, instead of reading it as ours', async () => {
    const login = await signIn(otherJson, config.path);
    assert.equal(login.code, 4, show(login));
    assert.match(
      login.stderr,
      /^error: http:\/\/127\.0\.0\.1:\d+ is not a Kennel server: POST \/api\/v1\/session answered 200 with JSON of another shape, and GET \/api\/v1\/openapi\.json answered 200, not the Kennel management API's document\. .*\(not_kennel\)$/m,
    );
    const whoami = await kennel(['whoami'], {
      env: { KENNEL_CONFIG_DIR: config.path, KENNEL_URL: otherJson, KENNEL_TOKEN: 'knl_x' },
    });
    assert.equal(whoami.code, 4, show(whoami));
    assert.match(
      whoami.stderr,
      /is not a Kennel server: GET \/api\/v1\/me answered 200 with JSON of another shape/,
    );
    assert.equal(whoami.stdout, '', 'nothing read from the other answer');
  });

  it('names the API the server does describe', async () => {
    const login = await signIn(otherApi, config.path);
    assert.equal(login.code, 4, show(login));
    assert.match(
      login.stderr,
      /is not a Kennel server: POST \/api\/v1\/session answered 401 \(application\/json\), and its \/api\/v1\/openapi\.json describes "Billing API"\./,
    );
  });

  it('keeps blaming a proxy, not the server, when the Kennel document is there', async () => {
    const env = { KENNEL_CONFIG_DIR: config.path, KENNEL_URL: proxied, KENNEL_TOKEN: 'knl_x' };
    const refused = await kennel(['projects', 'list'], { env });
    assert.equal(refused.code, 1, show(refused));
    assert.match(
      refused.stderr,
      /^error: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/projects answered 413 Payload Too Large without a Kennel API error: a proxy in front of the platform refused the request\. \(http_413\)$/m,
    );
    const page = await kennel(['teams', 'list'], { env });
    assert.equal(page.code, 4, show(page));
    assert.match(
      page.stderr,
      /answered 200 with something that is not JSON \(text\/html\): a proxy in front of the platform answered instead\. \(not_the_api\)/,
    );
  });
});

for (const dialect of testDialects()) {
  describe(`kennel against the Petstore and against the platform (${dialect})`, () => {
    let petstore: TestPetstore;
    let platform: CliServer;
    let petstoreAddress = '';
    const config = tempDir();

    before(async () => {
      petstore = await startPetstore(dialect);
      petstoreAddress = new URL(await petstore.listen()).host;
      platform = await startCliServer(dialect);
    });
    after(async () => {
      await petstore?.close();
      await platform?.close();
      config.remove();
    });

    it('tells the Petstore (errors of the same shape) from the platform, instead of "No operation at"', async () => {
      const login = await signIn(petstoreAddress, config.path);
      assert.equal(login.code, 4, show(login));
      assert.match(
        login.stderr,
        /^error: http:\/\/127\.0\.0\.1:\d+ is not a Kennel server: POST \/api\/v1\/session answered 404 route_not_found, and GET \/api\/v1\/openapi\.json answered 404, not the Kennel management API's document\. /m,
      );
      assert.doesNotMatch(login.stderr, /No operation at/);
      // The same command against the platform signs in: the check does not get in its way.
      const ok = await signIn(new URL(platform.url).host, config.path);
      assert.equal(ok.code, 0, show(ok));
    });

    it('reports a platform without an operation as a version mismatch, not as another server', async () => {
      const client = new ApiClient({ server: platform.url, userAgent: 'kennel-cli/9.9.9 node/24' });
      await assert.rejects(client.get('/api/v1/operation-of-a-later-version'), (error: unknown) => {
        assert.ok(error instanceof CliError);
        assert.equal(error.code, 'version_mismatch');
        assert.equal(error.exitCode, 1);
        assert.equal(
          error.message,
          `${platform.url} is a Kennel server, but GET /api/v1/operation-of-a-later-version answered 404 route_not_found: the server is older or newer than this CLI (kennel-cli/9.9.9). Use a CLI of the server's version.`,
        );
        return true;
      });
    });
  });
}
