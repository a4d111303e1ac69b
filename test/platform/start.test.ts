import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestStorage, type TestStorage, testDialects } from '../support/databases.ts';
import { requestAs } from '../support/http.ts';
import { NODE, type RunningProcess, startProcess, storageEnv } from '../support/processes.ts';

const dataDirs = new Map<TestStorage, string>();
const dataDirOf = (storage: TestStorage) => {
  if (!dataDirs.has(storage)) dataDirs.set(storage, mkdtempSync(join(tmpdir(), 'kennel-start-')));
  return dataDirs.get(storage) as string;
};

const env = (storage: TestStorage, extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDirOf(storage),
  ...storageEnv(storage.location),
  HTTP_PORT: '0',
  HTTPS_PORT: '0',
  PETSTORE_PORT: '0',
  LOG_LEVEL: 'info',
  ...extra,
});

async function statusFor(base: string, host: string, path: string): Promise<number> {
  return (await requestAs(Number(new URL(base).port), host, path)).status;
}

/** The platform answers at its domain (localhost by default), not at the bare address. */
const platformUrl = (server: RunningProcess) => server.url.replace('127.0.0.1', 'localhost');

async function signIn(base: string, email: string, password: string) {
  const response = await fetch(`${base}/api/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const { csrfToken } = (await response.json()) as { csrfToken?: string };
  return {
    status: response.status,
    cookie: (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '',
    csrfToken: csrfToken ?? '',
  };
}

for (const dialect of testDialects()) {
  describe(`npm start: the platform's first start (${dialect})`, () => {
    let storage: TestStorage;
    let server: RunningProcess | undefined;
    before(async () => {
      storage = await createTestStorage(dialect);
    });
    after(async () => {
      await server?.stop('SIGKILL');
      await storage.drop();
    });

    it('bootstraps an admin, prints the credentials once, and deploys the Petstore as the first project', async () => {
      server = await startProcess('platform.ts', env(storage));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const output = server.output();
      const password = /password {2}(\S+) {3}\(shown this once/.exec(output)?.[1];
      assert.ok(password, output);
      assert.match(output, /email {5}admin@localhost/);
      // The password is not in the JSON logs.
      for (const line of output.split('\n').filter((l) => l.startsWith('{')))
        assert.ok(!line.includes(password));

      const session = await signIn(platformUrl(server), 'admin@localhost', password);
      assert.equal(session.status, 201);
      const project = await fetch(`${platformUrl(server)}/api/v1/projects/petstore`, {
        headers: { cookie: session.cookie },
      });
      const body = (await project.json()) as {
        slug: string;
        activeDeployId: number | null;
        originUrl: string;
        plan: string;
      };
      assert.equal(body.slug, 'petstore');
      assert.equal(body.plan, 'enterprise');
      assert.notEqual(body.activeDeployId, null);
      // Published at its default address through the edge, and the origin is the running Petstore.
      // (curl and browsers resolve *.localhost themselves; Node's resolver does not, so set Host.)
      assert.equal(await statusFor(server.url, 'petstore.localhost', '/api/pets'), 200);
      assert.equal((await fetch(`${server.url}/api/pets`)).status, 404, 'a bare address is no project');
      const pets = await fetch(`${body.originUrl}/pets`);
      assert.equal(pets.status, 200);
      const document = (await (await fetch(`${body.originUrl}/openapi.json`)).json()) as {
        info: { title: string };
      };
      assert.equal(document.info.title, 'Petstore API');
      // The platform allows its bundled Petstore's origin (on loopback) and nothing else private.
      const redeploy = (originUrl: string) =>
        fetch(`${platformUrl(server as RunningProcess)}/api/v1/projects/petstore/deploys`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            cookie: session.cookie,
            'x-csrf-token': session.csrfToken,
          },
          body: JSON.stringify({ document: JSON.stringify(document), originUrl }),
        });
      assert.equal((await redeploy(body.originUrl)).status, 201);
      const operator = await redeploy('http://127.0.0.1:9464');
      assert.deepEqual(
        [operator.status, ((await operator.json()) as { code: string }).code],
        [422, 'origin_not_allowed'],
      );
      await server.stop('SIGTERM');

      server = await startProcess('platform.ts', env(storage));
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.doesNotMatch(server.output(), /Sign in with/);
      assert.equal((await signIn(platformUrl(server), 'admin@localhost', password)).status, 201);
      await server.stop('SIGTERM');
      server = undefined;
    });
  });
}

describe('npm start with the admin password from the environment', () => {
  it('uses KENNEL_ADMIN_EMAIL and KENNEL_ADMIN_PASSWORD and prints no password', async () => {
    const storage = await createTestStorage('sqlite');
    const server = await startProcess(
      'platform.ts',
      env(storage, {
        KENNEL_ADMIN_EMAIL: 'ops@example.test',
        KENNEL_ADMIN_PASSWORD: 'a long enough password',
      }),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.match(server.output(), /password {2}\(from KENNEL_ADMIN_PASSWORD\)/);
      assert.equal(
        (await signIn(platformUrl(server), 'ops@example.test', 'a long enough password')).status,
        201,
      );
    } finally {
      await server.stop('SIGTERM');
      await storage.drop();
    }
  });

  it('refuses a short admin password at start, naming the setting', async () => {
    const storage = await createTestStorage('sqlite');
    try {
      await assert.rejects(
        startProcess('platform.ts', env(storage, { KENNEL_ADMIN_PASSWORD: 'short' })),
        /KENNEL_ADMIN_PASSWORD must be at least 12 characters/,
      );
    } finally {
      await storage.drop();
    }
  });
});

/** Runs `npm start`'s entry to its exit (a start that fails before listening). */
async function runToExit(environment: Record<string, string>) {
  const child = spawn(NODE, [join(import.meta.dirname, '..', '..', 'src', 'main', 'platform.ts')], {
    env: { PATH: process.env.PATH ?? '', METRICS_PORT: '0', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

async function occupiedPort(): Promise<{ port: number; close(): Promise<void> }> {
  const server = createNetServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

for (const dialect of testDialects()) {
  describe(`npm start on a port already in use (${dialect})`, () => {
    it('says so in one line naming the port and its setting, exits 2, and creates nothing: the next start prints the credentials', async () => {
      const storage = await createTestStorage(dialect);
      const taken = await occupiedPort();
      try {
        for (const [setting, extra] of [
          ['HTTP_PORT', { HTTP_PORT: String(taken.port) }],
          ['HTTPS_PORT', { HTTPS_PORT: String(taken.port) }],
          ['PETSTORE_PORT', { PETSTORE_PORT: String(taken.port) }],
        ] as const) {
          const run = await runToExit(env(storage, { LOG_LEVEL: 'silent', ...extra }));
          assert.equal(run.code, 2, run.stderr);
          assert.equal(
            run.stderr,
            `Port ${taken.port} is already in use (${setting}): stop what listens on it, or set ${setting} to a free port.\n`,
          );
          assert.doesNotMatch(run.stdout, /Sign in with|admin API key/);
        }
        const server = await startProcess('platform.ts', env(storage));
        try {
          await new Promise((resolve) => setTimeout(resolve, 200));
          const output = server.output();
          const password = /password {2}(\S+) {3}\(shown this once/.exec(output)?.[1];
          assert.ok(password, output);
          assert.match(output, /The Petstore's first admin API key/);
          const port = new URL(server.url).port;
          assert.match(output, new RegExp(`Open the dashboard in a browser: http://localhost:${port}/\\n`));
          assert.equal((await signIn(platformUrl(server), 'admin@localhost', password)).status, 201);
        } finally {
          await server.stop('SIGTERM');
        }
      } finally {
        await taken.close();
        await storage.drop();
      }
    });
  });
}
