/**
 * The CLI outside the checkout (issue 28): the platform serves it as an npm tarball, npm installs it
 * into an empty prefix with no registry (its dependencies are bundled), and the machine's own Node
 * runs `kennel login`, `deploy` and `diff` from a folder that has nothing of Kennel's.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import { KENNEL_VERSION } from '../../src/platform/kennel-version.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { testDialects } from '../support/databases.ts';
import { outputOf } from '../support/processes.ts';
import { startTestNode, type TestNode } from '../support/test-node.ts';
import { type CliServer, ROOT, startCliServer, tempDir, USERS } from './harness.ts';

/** PATH without the checkout's node_modules/.bin: `node` is the machine's own (20 on the CI image). */
const SYSTEM_PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => dir !== '' && !dir.startsWith(ROOT))
  .join(delimiter);
const SYSTEM_NODE = execFileSync('node', ['--version'], {
  encoding: 'utf8',
  env: { PATH: SYSTEM_PATH },
}).trim();

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runIn(
  cwd: string,
  file: string,
  args: string[],
  env: Record<string, string>,
  input = '',
): Promise<Ran> {
  const child = spawn(file, args, { cwd, env: { PATH: SYSTEM_PATH, TZ: 'UTC', ...env } });
  child.stdin.end(input);
  return outputOf(child);
}

const show = (r: Ran) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

const V1 = `openapi: 3.0.3
info: { title: Shop, version: 1.0.0 }
paths:
  /orders/{id}:
    get:
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '200': { description: an order } }
    delete:
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '204': { description: gone } }
`;
/** DELETE removed: breaking. */
const V2 = V1.split('    delete:')[0] ?? '';

for (const dialect of testDialects()) {
  describe(`the CLI installed from the platform, outside the checkout (${dialect})`, () => {
    const data = tempDir('kennel-data-');
    const prefix = tempDir('kennel-prefix-');
    const work = tempDir('kennel-team-repo-');
    const home = tempDir('kennel-home-');
    let server: CliServer;
    let newer: TestNode;
    let url = '';
    let newerUrl = '';
    let tarball = '';
    const kennelBin = join(prefix.path, 'bin', 'kennel');
    const env = () => ({ HOME: home.path, KENNEL_CONFIG_DIR: join(home.path, 'kennel'), KENNEL_URL: url });

    before(async () => {
      server = await startCliServer(dialect, { DATA_DIR: data.path });
      ({ url } = server);
      // The same platform as a newer release would answer it: a second node on its database.
      newer = await startTestNode(dialect, {
        storage: server.platform.storage,
        app: { version: '99.0.0' },
        jobs: false,
      });
      newerUrl = await newer.node.app.listen({ port: 0, host: '127.0.0.1' });
      const { ctx } = server.platform;
      const team = await createTeam(ctx, server.actors.owner, 'Shop');
      await createProject(ctx, server.actors.owner, {
        teamId: team.id,
        slug: 'shop',
        name: 'Shop',
        originUrl: 'http://127.0.0.1:1',
      });
    });
    after(async () => {
      await newer?.stop();
      await server?.close();
      for (const dir of [data, prefix, work, home]) dir.remove();
    });

    it('serves the package at /cli/kennel-cli.tgz (and by version) with a content ETag', async () => {
      const answer = await fetch(`${url}/cli/kennel-cli.tgz`);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-type'), 'application/gzip');
      assert.equal(answer.headers.get('x-kennel-version'), KENNEL_VERSION);
      assert.equal(answer.headers.get('cache-control'), 'no-cache');
      const etag = answer.headers.get('etag') ?? '';
      assert.match(etag, /^"[\w-]{43}"$/);
      const body = Buffer.from(await answer.arrayBuffer());
      assert.deepEqual([...body.subarray(0, 2)], [0x1f, 0x8b], 'gzip');
      tarball = join(work.path, 'kennel-cli.tgz');
      writeFileSync(tarball, body);

      const versioned = await fetch(`${url}/cli/kennel-cli-${KENNEL_VERSION}.tgz`);
      assert.equal(versioned.status, 200);
      assert.equal(versioned.headers.get('etag'), etag);
      assert.ok(Buffer.from(await versioned.arrayBuffer()).equals(body));
      const revalidated = await fetch(`${url}/cli/kennel-cli.tgz`, { headers: { 'if-none-match': etag } });
      assert.equal(revalidated.status, 304);
      const other = await fetch(`${url}/cli/kennel-cli-0.0.1.tgz`);
      assert.equal(other.status, 404);
      assert.deepEqual(await other.json(), {
        code: 'route_not_found',
        message: `This platform serves the CLI of Kennel ${KENNEL_VERSION} only, at /cli/kennel-cli.tgz.`,
        status: 404,
      });
      assert.ok(
        existsSync(join(data.path, 'cli', `kennel-cli-${KENNEL_VERSION}.tgz`)),
        'kept in DATA_DIR/cli',
      );
    });

    it(`installs with npm into an empty prefix with no registry, and runs on the machine's Node (${SYSTEM_NODE})`, async () => {
      assert.ok(tarball, 'the tarball was downloaded');
      // An empty npm cache and --offline: everything the CLI needs is in the tarball.
      const installed = await runIn(
        work.path,
        'npm',
        ['install', '-g', '--prefix', prefix.path, '--offline', '--no-audit', '--no-fund', tarball],
        {
          HOME: home.path,
          npm_config_cache: join(home.path, 'npm-cache'),
          npm_config_update_notifier: 'false',
        },
      );
      assert.equal(installed.code, 0, show(installed));
      const version = await runIn(work.path, kennelBin, ['--version'], env());
      assert.equal(version.code, 0, show(version));
      assert.equal(version.stdout, `kennel ${KENNEL_VERSION} (made for Kennel server ${KENNEL_VERSION})\n`);
      assert.equal(version.stderr, '');
      // And on the platform's own Node.
      const onPlatformNode = await runIn(
        work.path,
        process.execPath,
        [
          join(prefix.path, 'lib', 'node_modules', '@kennel-platform', 'cli', 'bin', 'kennel.js'),
          '--version',
        ],
        env(),
      );
      assert.equal(onPlatformNode.stdout, version.stdout, show(onPlatformNode));
    });

    it('runs kennel login, deploy and diff from another folder', async () => {
      const login = await runIn(
        work.path,
        kennelBin,
        ['login', '--email', USERS.owner.email, '--password-stdin'],
        env(),
        `${USERS.owner.password}\n`,
      );
      assert.equal(login.code, 0, show(login));
      assert.match(login.stdout, new RegExp(`Signed in to ${url.replaceAll('.', '\\.')} as owner@x\\.test`));

      writeFileSync(join(work.path, 'openapi.yaml'), V1);
      const deploy = await runIn(work.path, kennelBin, ['deploy', 'shop', 'openapi.yaml'], env());
      assert.equal(deploy.code, 0, show(deploy));
      assert.match(deploy.stdout, /^Deploy #1 \(deploy \d+\) of shop succeeded \(yaml\); it is now live/m);

      writeFileSync(join(work.path, 'openapi.next.yaml'), V2);
      const live = await runIn(
        work.path,
        kennelBin,
        ['diff', '--project', 'shop', 'openapi.next.yaml'],
        env(),
      );
      assert.equal(live.code, 1, show(live));
      assert.match(
        live.stdout,
        /^1 change from shop \(live\) to openapi\.next\.yaml: 1 breaking, 0 warnings, 0 info\.\n\nBreaking \(1\)\n {2}DELETE \/orders\/\{id\}\n/,
      );
      const offline = await runIn(work.path, kennelBin, ['diff', 'openapi.yaml', 'openapi.yaml'], env());
      assert.equal(offline.code, 0, show(offline));
      assert.equal(offline.stdout, 'No changes between openapi.yaml and openapi.yaml.\n');
      // Made for this server: no notice.
      assert.equal(`${login.stderr}${deploy.stderr}${live.stderr}`.includes('notice:'), false);
    });

    it('says once, on stderr, when the server is newer than the CLI; --json stays clean', async () => {
      const login = await runIn(
        work.path,
        kennelBin,
        ['login', '--server', newerUrl, '--email', USERS.owner.email, '--password-stdin'],
        env(),
        `${USERS.owner.password}\n`,
      );
      assert.equal(login.code, 0, show(login));
      const notice = `notice: the Kennel server at ${newerUrl} runs 99.0.0; this kennel CLI was made for ${KENNEL_VERSION}. Update it: npm install -g ${newerUrl}/cli/kennel-cli.tgz\n`;
      assert.equal(login.stderr, notice);
      const whoami = await runIn(work.path, kennelBin, ['whoami', '--json'], {
        ...env(),
        KENNEL_URL: newerUrl,
      });
      assert.equal(whoami.code, 0, show(whoami));
      assert.deepEqual(JSON.parse(whoami.stdout), { email: USERS.owner.email, isAdmin: false });
      assert.equal(whoami.stderr, notice);
    });
  });
}
