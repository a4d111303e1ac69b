import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { COMMANDS, isGroup } from '../../src/cli/registry.ts';
import { BIN, type CliResult, kennel, ROOT, tempDir } from './harness.ts';

function show(result: CliResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** A port nothing listens on: bound, noted, closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('kennel usage, help and exit codes (no server needed)', () => {
  const config = tempDir();
  const env = () => ({ KENNEL_CONFIG_DIR: config.path });
  after(() => config.remove());

  it('answers --help on every command and group with its usage, exit 0', async () => {
    const lines = [
      [],
      ['help'],
      ...COMMANDS.map((entry) => [entry.name]),
      ...COMMANDS.flatMap((entry) => (isGroup(entry) ? entry.commands.map((c) => c.name.split(' ')) : [])),
    ];
    const results = await Promise.all(
      lines.map(async (words) => ({
        words,
        flag: await kennel([...words, '--help'], { env: env() }),
        short: await kennel(['-h', ...words], { env: env() }),
      })),
    );
    for (const { words, flag, short } of results) {
      const name = ['kennel', ...words].join(' ');
      assert.equal(flag.code, 0, `${name} --help: ${show(flag)}`);
      assert.match(flag.stdout, /^Usage:$/m, name);
      assert.match(flag.stdout, /--json/, name);
      assert.equal(flag.stderr, '', name);
      assert.equal(short.stdout, flag.stdout, `${name} -h`);
    }
    const top = results[0]?.flag.stdout ?? '';
    for (const entry of COMMANDS) {
      const names = isGroup(entry) ? entry.commands.map((c) => c.name) : [entry.name];
      for (const name of names)
        assert.match(top, new RegExp(`^ {2}${name}\\b`, 'm'), `kennel --help lists ${name}`);
    }
    assert.match(top, /^Exit codes:$/m);
    for (const code of ['0', '1', '2', '3', '4']) assert.match(top, new RegExp(`^ {2}${code} +\\S`, 'm'));
    const verify = results.find((r) => r.words.join(' ') === 'domains verify')?.flag.stdout ?? '';
    assert.match(verify, /kennel domains verify SLUG HOSTNAME \[options\]/);
    assert.match(verify, /--timeout DURATION/);
    const create = results.find((r) => r.words.join(' ') === 'projects create')?.flag.stdout ?? '';
    assert.match(create, /kennel projects create --team ID --slug SLUG --name NAME --origin URL \[options\]/);
  });

  it('is documented in docs/cli.md: every command and every exit code', () => {
    const docs = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
    for (const entry of COMMANDS) {
      for (const command of isGroup(entry) ? entry.commands : [entry]) {
        assert.ok(docs.includes(`\`kennel ${command.name}`), `docs/cli.md documents kennel ${command.name}`);
      }
    }
    for (const code of [0, 1, 2, 3, 4, 130]) {
      assert.match(docs, new RegExp(`^\\| ${code} \\| `, 'm'), `docs/cli.md explains exit code ${code}`);
    }
  });

  it('shows help with kennel help COMMAND, and the version with --version', async () => {
    const help = await kennel(['help', 'domains', 'apply'], { env: env() });
    assert.equal(help.code, 0, show(help));
    assert.match(help.stdout, /kennel domains apply SLUG FILE \[options\]/);
    const version = await kennel(['--version'], { env: env() });
    assert.match(version.stdout, /^kennel \d+\.\d+\.\d+ \(made for Kennel server \d+\.\d+\.\d+\)\n$/);
  });

  it('exits 2 with a usage error on stderr for an unknown command, option or missing argument', async () => {
    const cases: [string[], RegExp][] = [
      [[], /error: no command given/],
      // An unknown option with no command is named (before, only "no command given").
      [['--frobnicate'], /^error: unknown option "--frobnicate"\.$/m],
      [['--jsn'], /^error: unknown option "--jsn"; did you mean "--json"\?$/m],
      [['deploi', 'x', 'y'], /unknown command "deploi"; did you mean "kennel deploy"\?/],
      // Two letters swapped and one missing: two edits, as a person counts them.
      [['domian'], /^error: unknown command "domian"; did you mean "kennel domains"\?$/m],
      [['projets', 'list'], /unknown command "projets"; did you mean "kennel projects"\?/],
      // A group's command without its group.
      [['verify', 'a', 'b'], /unknown command "verify"; did you mean "kennel domains verify"\?/],
      [
        ['list'],
        /unknown command "list"; did you mean "kennel <teams\|members\|projects\|domains\|origins\|keys> list"\?/,
      ],
      [['zzz'], /^error: unknown command "zzz"\.$/m],
      [
        ['domains'],
        /kennel domains needs a command \(add, list, inspect, verify, reverify, remove, apply, export\)/,
      ],
      [
        ['domains', 'verfy', 'a', 'b'],
        /unknown domains command "verfy"; did you mean "kennel domains verify"\?/,
      ],
      [['domains', 'lsit', 'a'], /unknown domains command "lsit"; did you mean "kennel domains list"\?/],
      [
        ['domains', 'verify', 'petstore'],
        /error: missing HOSTNAME\.\nusage: kennel domains verify SLUG HOSTNAME/,
      ],
      [['domains', 'verify', 'a', 'b', 'c'], /unexpected argument "c"/],
      [['domains', 'list', 'a', '--wat'], /unknown option for kennel domains list: "--wat"/],
      [['domains', 'list', 'a', '--server'], /--server needs a value/],
      [['domains', 'verify', 'a', 'b', '--wait', '--timeout', 'soon'], /--timeout must be a duration/],
      [['projects', 'create', '--team', '1'], /--slug SLUG is required/],
      [['teams', 'set-plan', 'one', 'pro'], /TEAM_ID must be a positive whole number/],
      [['whoami', '--server', 'ftp://x'], /--server must use http:\/\/ or https:\/\/ \(got ftp:\/\/\)/],
      [['login'], /pipe the password in with --password-stdin|Give --email/],
    ];
    const results = await Promise.all(cases.map(([args]) => kennel(args, { env: env() })));
    results.forEach((result, i) => {
      const [args, message] = cases[i] ?? [[], /./];
      assert.equal(result.code, 2, `kennel ${args.join(' ')}: ${show(result)}`);
      assert.match(result.stderr, message, `kennel ${args.join(' ')}`);
      assert.match(result.stderr, /--help' for help\.\n$/, `kennel ${args.join(' ')} points at --help`);
      if (args.length > 0)
        assert.equal(result.stdout, '', `kennel ${args.join(' ')} prints nothing on stdout`);
    });
  });

  it('exits 3 when not signed in, without contacting the server', async () => {
    const port = await closedPort();
    const result = await kennel(['projects', 'list'], {
      env: { ...env(), KENNEL_URL: `http://127.0.0.1:${port}` },
    });
    assert.equal(result.code, 3, show(result));
    assert.match(
      result.stderr,
      /^error: Not signed in to http:\/\/127\.0\.0\.1:\d+\. Run kennel login --server .*\(not_signed_in\)$/m,
    );
  });

  it('never sends a saved token to another server than the one it was saved for', async () => {
    const dir = tempDir();
    const received: string[] = [];
    const spy = createServer((req, res) => {
      received.push(String(req.headers.authorization));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"email":"x@y","isAdmin":false}');
    });
    await new Promise<void>((resolve) => spy.listen(0, '127.0.0.1', resolve));
    try {
      writeFileSync(
        join(dir.path, 'credentials.json'),
        JSON.stringify({ server: 'http://127.0.0.1:9', email: 'a@b', token: 'knl_secret', tokenId: 1 }),
        { mode: 0o600 },
      );
      const url = `http://127.0.0.1:${(spy.address() as AddressInfo).port}`;
      const result = await kennel(['whoami'], { env: { KENNEL_CONFIG_DIR: dir.path, KENNEL_URL: url } });
      assert.equal(result.code, 3, show(result));
      assert.match(
        result.stderr,
        /The saved credentials \(.*credentials\.json\) are for http:\/\/127\.0\.0\.1:9\./,
      );
      assert.deepEqual(received, []);
    } finally {
      spy.close();
      dir.remove();
    }
  });

  it('exits 4 when the server is unreachable', async () => {
    const port = await closedPort();
    const result = await kennel(['whoami'], {
      env: { ...env(), KENNEL_URL: `http://127.0.0.1:${port}`, KENNEL_TOKEN: 'knl_x' },
    });
    assert.equal(result.code, 4, show(result));
    assert.match(
      result.stderr,
      /^error: Cannot reach the Kennel server at http:\/\/127\.0\.0\.1:\d+ \(.*ECONNREFUSED.*\)/m,
    );
    assert.doesNotMatch(result.stderr, /knl_x/);
  });

  it('refuses to run on a Node.js older than 24, with a hint', { skip: !olderNode() }, () => {
    const node = olderNode() ?? '';
    let code = 0;
    let stderr = '';
    try {
      execFileSync(node, [BIN, '--help'], { stdio: 'pipe' });
    } catch (error) {
      code = (error as { status: number }).status;
      stderr = String((error as { stderr: Buffer }).stderr);
    }
    assert.equal(code, 1);
    assert.match(stderr, /kennel needs Node\.js 24: run it through npx kennel or npm exec/);
  });
});

/** The system's node, when it is older than 24 (as on the CI image). */
function olderNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    try {
      const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' });
      if (Number(/^v(\d+)/.exec(version)?.[1]) < 24) return candidate;
    } catch {}
  }
  return undefined;
}

describe('kennel against a server that fails', () => {
  let server: Server;
  let url = '';
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/api/v1/me') {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            code: 'internal_error',
            message: 'Something went wrong on our side.',
            status: 500,
          }),
        );
      } else if (req.url === '/api/v1/teams' || req.url === '/api/v1/openapi.json') {
        // A proxy whose platform is down: its own OpenAPI document fails the same way.
        res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
      } else {
        res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('exits 4 on a 5xx, with the API message and code', async () => {
    const result = await kennel(['whoami', '--json'], { env: { KENNEL_URL: url, KENNEL_TOKEN: 'knl_x' } });
    assert.equal(result.code, 4, show(result));
    assert.match(result.stderr, /^error: Something went wrong on our side\. \(internal_error\)$/m);
    assert.deepEqual(JSON.parse(result.stdout), {
      code: 'internal_error',
      message: 'Something went wrong on our side.',
      status: 500,
    });
    const proxy = await kennel(['teams', 'list'], { env: { KENNEL_URL: url, KENNEL_TOKEN: 'knl_x' } });
    assert.equal(proxy.code, 4, show(proxy));
    assert.match(
      proxy.stderr,
      /answered 502 Bad Gateway without a Kennel API error: .* Try again later\. \(http_502\)/,
    );
  });
});
