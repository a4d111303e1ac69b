import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { type PlatformTables, platformMigrations } from '../../src/platform/db-schema.ts';
import { migrateToLatest, openDatabase, quoteIdentifier } from '../../src/storage/index.ts';
import {
  createTestStorage,
  TEST_POSTGRES_URL,
  type TestStorage,
  testDialects,
} from '../support/databases.ts';
import { type Reply, requestAs, secureRequestAs } from '../support/http.ts';
import {
  NODE,
  processSuite,
  type RunningProcess,
  runToExit as runEntryToExit,
  startProcess,
  storageEnv,
} from '../support/processes.ts';

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
    const suite = processSuite(dialect);

    it('bootstraps an admin, prints the credentials once, and deploys the Petstore as the first project', async () => {
      suite.server = await startProcess('platform.ts', env(suite.storage));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const output = suite.server.output();
      const password = /password {2}(\S+) {3}\(shown this once/.exec(output)?.[1];
      assert.ok(password, output);
      assert.match(output, /email {5}admin@localhost/);
      // The password is not in the JSON logs.
      for (const line of output.split('\n').filter((l) => l.startsWith('{')))
        assert.ok(!line.includes(password));

      const session = await signIn(platformUrl(suite.server), 'admin@localhost', password);
      assert.equal(session.status, 201);
      const project = await fetch(`${platformUrl(suite.server)}/api/v1/projects/petstore`, {
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
      assert.equal(await statusFor(suite.server.url, 'petstore.localhost', '/api/pets'), 200);
      assert.equal((await fetch(`${suite.server.url}/api/pets`)).status, 404, 'a bare address is no project');
      const pets = await fetch(`${body.originUrl}/pets`);
      assert.equal(pets.status, 200);
      const document = (await (await fetch(`${body.originUrl}/openapi.json`)).json()) as {
        info: { title: string };
      };
      assert.equal(document.info.title, 'Petstore API');
      // The platform allows its bundled Petstore's origin (on loopback) and nothing else private.
      const redeploy = (originUrl: string) =>
        fetch(`${platformUrl(suite.server as RunningProcess)}/api/v1/projects/petstore/deploys`, {
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
      await suite.server.stop('SIGTERM');

      suite.server = await startProcess('platform.ts', env(suite.storage));
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.doesNotMatch(suite.server.output(), /Sign in with/);
      assert.equal((await signIn(platformUrl(suite.server), 'admin@localhost', password)).status, 201);
      await suite.server.stop('SIGTERM');
      suite.server = undefined;
    });
  });
}

/** Waits (up to 30 s, a loaded machine) until the process has written `pattern`. */
async function waitForOutput(server: RunningProcess, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 30_000;
  while (!pattern.test(server.output())) {
    assert.ok(Date.now() < deadline, `never printed ${pattern}:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return server.output();
}

describe("npm start's console: the first start's block after the listening lines, one line per request", () => {
  it('prints one framed block after every listening line, and logs each request once', async () => {
    const storage = await createTestStorage('sqlite');
    const server = await startProcess('platform.ts', env(storage));
    try {
      const output = await waitForOutput(server, /^└─+$/m);
      const lines = output.split('\n');
      const top = lines.findIndex((l) => /^┌─+$/.test(l));
      const bottom = lines.findIndex((l) => /^└─+$/.test(l));
      assert.ok(top >= 0 && bottom > top, output);
      // Every listening line (the Petstore's listener, the platform's last start-up line) comes first.
      const listening = lines.flatMap((l, i) => (/listening/i.test(l) && l.startsWith('{') ? [i] : []));
      assert.equal(listening.length, 2, output);
      assert.ok(
        listening.every((i) => i < top),
        `listening lines at ${listening.join(', ')}, block at ${top}:\n${output}`,
      );
      assert.match(lines[listening.at(-1) as number] as string, /"msg":"Kennel listening on /);
      // One block: each line inside it is framed, and it holds everything a first start shows.
      const block = lines.slice(top + 1, bottom);
      assert.deepEqual(
        block.filter((l) => !/^│( |$)/.test(l)),
        [],
        'every line of the block is framed',
      );
      const text = block.map((l) => l.replace(/^│ ?/, '')).join('\n');
      const port = new URL(server.url).port;
      assert.match(
        text,
        /^Kennel is set up\. Sign in with:\n {2}email {5}admin@localhost\n {2}password {2}\S{20,} {3}\(shown this once; not stored in clear\)$/m,
      );
      assert.match(text, new RegExp(`^Open the dashboard in a browser: http://localhost:${port}/$`, 'm'));
      assert.match(
        text,
        new RegExp(
          `^Install the CLI anywhere: npm install -g http://localhost:${port}/cli/kennel-cli\\.tgz$`,
          'm',
        ),
      );
      assert.match(text, /^The Petstore's first admin API key .*\n {2}pk_[\w-]{20,}$/m);
      assert.equal(lines.filter((l) => /^┌/.test(l)).length, 1, 'one block');

      // Each request is one line on the console: the edge's access line. Fastify's lines for the
      // same request (the control plane's, the Petstore's behind the edge) would carry its reqId.
      const requests = [
        ['localhost', '/api/v1/session'],
        ['localhost', '/api/v1/me'],
        ['localhost', '/no-such-page'],
        ['petstore.localhost', '/api/pets'],
      ] as const;
      for (const [host, path] of requests) {
        const reply = await requestAs(Number(port), host, path);
        assert.ok(reply.status > 0);
      }
      const logged = (await waitForOutput(server, /"path":"\/api\/pets"[^\n]*\n/)).split('\n');
      for (const [host, path] of requests) {
        const access = logged.filter((l) => l.includes(`"path":"${path}"`));
        assert.equal(access.length, 1, `${host}${path}:\n${access.join('\n')}`);
        const { reqId, msg } = JSON.parse(access[0] as string) as { reqId: string; msg: string };
        assert.equal(msg, 'request');
        const all = logged.filter((l) => l.includes(reqId));
        assert.deepEqual(all, access, `${host}${path} is logged once`);
      }
    } finally {
      await server.stop('SIGTERM');
      await storage.drop();
    }
  });
});

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
const runToExit = (environment: Record<string, string>) =>
  runEntryToExit('platform.ts', [], { METRICS_PORT: '0', ...environment });

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
          assert.match(
            output,
            new RegExp(
              `Install the CLI anywhere: npm install -g http://localhost:${port}/cli/kennel-cli\\.tgz\\n`,
            ),
          );
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

/** One HTTPS request to the edge's TLS port (the internal CA's certificate: not checked here). */
function httpsAs(port: number, host: string, path: string): Promise<Reply> {
  return secureRequestAs(port, host, path, { hangMs: 5_000 });
}

describe('npm start answers no 200 until its first start is done (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  it('answers 503 node_starting with Retry-After (and /healthz, /readyz "starting") until sign-in with the printed credentials works', async () => {
    // The window between binding the ports and creating the admin is made visible, and as long
    // as the test wants, through the real entry point and without any hook in the platform: the
    // test migrates the schema itself and holds an ACCESS EXCLUSIVE lock on `users`, so the
    // start binds every port and then waits in bootstrap (whose first query reads `users`) until
    // the test commits. The same window exists on SQLite, only too short to observe.
    const storage = await createTestStorage('postgres');
    const location = storage.location as { kind: 'postgres'; url: string; schema: string };
    const schema = openDatabase<PlatformTables>(location);
    await migrateToLatest(schema.db, schema.dialect, 'platform', platformMigrations);
    await schema.close();
    const lock = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await lock.connect();
    await lock.query(`SET search_path TO ${quoteIdentifier(location.schema)}`);
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    const ports = await Promise.all([occupiedPort(), occupiedPort(), occupiedPort()]);
    await Promise.all(ports.map((port) => port.close()));
    const [httpPort, httpsPort, metricsPort] = ports.map((port) => port.port) as [number, number, number];
    const child = spawn(NODE, [join(import.meta.dirname, '..', '..', 'src', 'main', 'platform.ts')], {
      env: {
        PATH: process.env.PATH ?? '',
        ...env(storage, {
          HTTP_PORT: String(httpPort),
          HTTPS_PORT: String(httpsPort),
          METRICS_PORT: String(metricsPort),
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = once(child, 'exit');
    const signInBody = (password: string) => JSON.stringify({ email: 'admin@localhost', password });
    const probes: Array<[string, () => Promise<Reply>]> = [
      ['GET localhost/healthz', () => requestAs(httpPort, 'localhost', '/healthz', { hangMs: 5_000 })],
      ['GET localhost/readyz', () => requestAs(httpPort, 'localhost', '/readyz', { hangMs: 5_000 })],
      [
        'GET localhost/api/v1/openapi.json',
        () => requestAs(httpPort, 'localhost', '/api/v1/openapi.json', { hangMs: 5_000 }),
      ],
      [
        'POST localhost/api/v1/session',
        () =>
          requestAs(httpPort, 'localhost', '/api/v1/session', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: signInBody('a guess at the password'),
            hangMs: 5_000,
          }),
      ],
      [
        'GET petstore.localhost/api/pets',
        () => requestAs(httpPort, 'petstore.localhost', '/api/pets', { hangMs: 5_000 }),
      ],
      ['GET https localhost/api/v1/me', () => httpsAs(httpsPort, 'localhost', '/api/v1/me')],
      ['GET operator /healthz', () => requestAs(metricsPort, '127.0.0.1', '/healthz', { hangMs: 5_000 })],
      ['GET operator /readyz', () => requestAs(metricsPort, '127.0.0.1', '/readyz', { hangMs: 5_000 })],
    ];
    try {
      // From the first moment the edge accepts connections, for a second and a half of answers.
      const deadline = Date.now() + 20_000;
      let firstAnswerAt: number | undefined;
      const seen: Array<[string, Reply]> = [];
      while (firstAnswerAt === undefined || Date.now() < firstAnswerAt + 1_500) {
        assert.ok(Date.now() < deadline, `the edge never answered:\n${output}`);
        assert.equal(child.exitCode, null, output);
        for (const [name, probe] of probes) {
          const reply = await probe().catch(() => undefined); // not listening yet
          if (!reply) continue;
          firstAnswerAt ??= Date.now();
          seen.push([name, reply]);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.doesNotMatch(output, /Sign in with/, 'nothing is printed while bootstrap waits');
      for (const [name, reply] of seen) {
        const body = JSON.parse(reply.text) as Record<string, unknown>;
        assert.deepEqual(
          [name, reply.status, reply.headers['retry-after']],
          [name, 503, '1'],
          `${name}: ${reply.text}`,
        );
        if (name.endsWith('/healthz')) assert.deepEqual(body, { status: 'starting' });
        else if (name.endsWith('/readyz'))
          assert.deepEqual(body, { status: 'starting', checks: { database: 'ok' } });
        else
          assert.deepEqual(body, {
            code: 'node_starting',
            message:
              'Kennel is still starting on this node and serves nothing yet. Try again in a second (Retry-After).',
            status: 503,
          });
      }
      const names = new Set(seen.map(([name]) => name));
      assert.deepEqual([...names].sort(), probes.map(([name]) => name).sort(), 'every listener answered');

      // Bootstrap goes on; the first 200 is followed at once by a sign-in with what was printed.
      await lock.query('COMMIT');
      let first: Reply;
      for (;;) {
        first = await requestAs(httpPort, 'localhost', '/api/v1/openapi.json', { hangMs: 5_000 });
        if (first.status !== 503) break;
        assert.equal((JSON.parse(first.text) as { code: string }).code, 'node_starting');
        assert.ok(Date.now() < deadline + 10_000, `still starting:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(first.status, 200);
      // Printed before the node turned ready; the pipe may deliver it a moment after the answer.
      const printed = Date.now() + 2_000;
      while (!/password {2}\S+ {3}\(shown this once/.test(output) && Date.now() < printed)
        await new Promise((resolve) => setTimeout(resolve, 5));
      const password = /password {2}(\S+) {3}\(shown this once/.exec(output)?.[1];
      assert.ok(password, output);
      const session = await requestAs(httpPort, 'localhost', '/api/v1/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: signInBody(password),
        // Passwords are hashed on a nice-10 thread: seconds when the machine is loaded.
        hangMs: 15_000,
      });
      assert.equal(session.status, 201, session.text);
      assert.equal((await requestAs(httpPort, 'localhost', '/readyz')).status, 200);
      assert.equal((await requestAs(httpPort, 'localhost', '/healthz')).status, 200);
      assert.equal((await requestAs(httpPort, 'petstore.localhost', '/api/pets')).status, 200);
    } finally {
      // The lock first: a start still waiting on it could not shut down.
      await lock.end().catch(() => {});
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
      await storage.drop();
    }
  });
});
