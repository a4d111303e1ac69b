import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import { authenticate } from '../../src/platform/accounts/users.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import type { TestDns } from '../support/dns.ts';
import { dnsEnv, petstoreZones, startZones } from '../support/platform-dns.ts';
import { BIN, type CliServer, ROOT, startCliServer, tempDir, USERS } from './harness.ts';

/** util-linux `script` gives the CLI a real terminal (a pseudo-terminal) on stdin, stdout and stderr. */
const hasScript = spawnSync('script', ['--version']).status === 0;

interface Session {
  /** Resolves once the terminal shows text matching the pattern. */
  waitFor(pattern: RegExp): Promise<void>;
  type(text: string): void;
  done: Promise<{ code: number | null; screen: string }>;
}

function onTerminal(args: string[], env: Record<string, string>): Session {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm', TZ: 'UTC', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const onData = (chunk: Buffer) => {
    screen += chunk.toString();
    for (const w of [...waiters]) {
      if (w.pattern.test(screen)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const done = new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kennel ${args.join(' ')} did not finish on the terminal:\n${screen}`));
    }, 30_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
  return {
    waitFor: (pattern) =>
      pattern.test(screen)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ pattern, resolve });
            done.then(() => reject(new Error(`the terminal never showed ${pattern}:\n${screen}`)), reject);
          }),
    type: (text) => child.stdin.write(text),
    done: done.finally(() => child.stdin.end()),
  };
}

describe('kennel on a terminal', { skip: hasScript ? false : 'util-linux script is not installed' }, () => {
  let dns: TestDns;
  let server: CliServer;
  let token = '';
  const config = tempDir();

  before(async () => {
    dns = await startZones(petstoreZones(['shop']));
    server = await startCliServer('sqlite', dnsEnv(dns));
    const { ctx } = server.platform;
    const owner = await authenticate(ctx, USERS.owner.email, USERS.owner.password);
    const team = await createTeam(ctx, owner, 'Shop', 'pro');
    await createProject(ctx, owner, {
      teamId: team.id,
      slug: 'petstore',
      name: 'P',
      originUrl: 'http://a.test',
    });
    await deployProject(ctx, owner, 'petstore', {
      document: JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} }),
    });
    await addDomain(ctx, owner, 'petstore', 'shop.example.test');
    await addDomain(ctx, owner, 'petstore', 'old.example.test');
    token = (await createToken(ctx, owner, 'terminal tests')).token;
  });
  after(async () => {
    await server?.close();
    await dns?.stop();
    config.remove();
  });

  it('asks for the email and the password, without echoing the password', async () => {
    const session = onTerminal(['login'], { KENNEL_URL: server.url, KENNEL_CONFIG_DIR: config.path });
    await session.waitFor(/Email: /);
    session.type(`${USERS.owner.email}\r`);
    await session.waitFor(/Password: /);
    session.type(`${USERS.owner.password}\r`);
    const { code, screen } = await session.done;
    assert.equal(code, 0, screen);
    assert.match(screen, /Signed in to .* as owner@x\.test/);
    assert.ok(!screen.includes(USERS.owner.password), `the password was echoed:\n${screen}`);
    assert.equal(statSync(join(config.path, 'credentials.json')).mode & 0o777, 0o600);
  });

  it('shows a spinner on stderr while verifying', async () => {
    const session = onTerminal(['domains', 'verify', 'petstore', 'shop.example.test'], {
      KENNEL_URL: server.url,
      KENNEL_TOKEN: token,
    });
    const { code, screen } = await session.done;
    assert.equal(code, 0, screen);
    assert.ok(screen.includes('\r\x1b[2K⠋ Checking DNS for shop.example.test…'), screen);
    assert.match(screen, /✓ shop\.example\.test is verified\./);
  });

  it('asks before removing a domain: no keeps it (exit 1), yes removes it', async () => {
    const env = { KENNEL_URL: server.url, KENNEL_TOKEN: token };
    const declined = onTerminal(['domains', 'remove', 'petstore', 'old.example.test'], env);
    await declined.waitFor(/Remove old\.example\.test from petstore\? .*\[y\/N\] /);
    declined.type('n\r');
    const no = await declined.done;
    assert.equal(no.code, 1, no.screen);
    assert.match(no.screen, /Nothing was removed\./);

    const accepted = onTerminal(['domains', 'remove', 'petstore', 'old.example.test'], env);
    await accepted.waitFor(/\[y\/N\] /);
    accepted.type('y\r');
    const yes = await accepted.done;
    assert.equal(yes.code, 0, yes.screen);
    assert.match(yes.screen, /Removed old\.example\.test from petstore/);
    assert.ok(existsSync(BIN));
  });
});
