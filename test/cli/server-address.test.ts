import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UsageError } from '../../src/cli/errors.ts';
import { normaliseServer } from '../../src/cli/server-address.ts';
import { testDialects } from '../support/databases.ts';
import { type CliResult, type CliServer, kennel, startCliServer, tempDir, USERS } from './harness.ts';

function show(result: CliResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

describe('server addresses: a URL, or host:port without a scheme', () => {
  it('gives http to loopback hosts and https to every other host', () => {
    const cases: [string, string][] = [
      ['localhost:8080', 'http://localhost:8080'],
      ['localhost', 'http://localhost'],
      ['app.localhost:3000/kennel/', 'http://app.localhost:3000/kennel'],
      ['127.0.0.1:8080', 'http://127.0.0.1:8080'],
      ['127.1.2.3:9', 'http://127.1.2.3:9'],
      ['[::1]:8080', 'http://[::1]:8080'],
      ['[::1]', 'http://[::1]'],
      ['kennel.example.com', 'https://kennel.example.com'],
      ['kennel.example.com:8443', 'https://kennel.example.com:8443'],
      // Port 80 stays: the user named it, and only https would make it a default.
      ['kennel.example.com:80', 'https://kennel.example.com:80'],
      ['kennel.example.com:443', 'https://kennel.example.com'],
      ['10.0.0.5:8080', 'https://10.0.0.5:8080'],
      ['[2001:db8::1]:8080', 'https://[2001:db8::1]:8080'],
      ['münchen.example:8443', 'https://xn--mnchen-3ya.example:8443'],
      // A URL keeps its scheme, whatever the host.
      ['http://kennel.example.com:8080/', 'http://kennel.example.com:8080'],
      ['https://localhost:8443', 'https://localhost:8443'],
      ['HTTP://LOCALHOST:8080', 'http://localhost:8080'],
    ];
    for (const [input, expected] of cases) assert.equal(normaliseServer(input), expected, input);
  });

  it('refuses what is not an address with a usage error naming where it came from', () => {
    const cases: [string, RegExp][] = [
      ['localhost:', /^--server "localhost:" has no port after the colon: give host:port/],
      [
        'localhost:http',
        /^--server "localhost:http" has the port "http": a port is a number from 1 to 65535\.$/,
      ],
      ['localhost:65536', /has the port 65536: a port is a number from 1 to 65535/],
      ['localhost:0', /has the port 0: a port is a number from 1 to 65535/],
      [
        '::1:8080',
        /^--server "::1:8080" looks like an IPv6 address: put it in brackets, as in \[::1\]:8080\.$/,
      ],
      ['[::1', /is not a server address: give one such as localhost:8080/],
      ['[zz]:80', /is not a server address/],
      ['a b:80', /is not a server address/],
      ['', /^--server is empty/],
      ['http:/localhost:8080', /is not a URL: write the scheme with two slashes/],
      ['ftp://files.example.com', /^--server must use http:\/\/ or https:\/\/ \(got ftp:\/\/\)/],
      ['http://me:pw@localhost:8080', /put no user name or password in it/],
      ['localhost:8080/?x=1', /takes no \?query or #fragment/],
    ];
    for (const [input, message] of cases) {
      assert.throws(
        () => normaliseServer(input, '--server'),
        (error: unknown) => error instanceof UsageError && message.test(error.message),
        input,
      );
    }
  });

  it('exits 2 on a bad --server or KENNEL_URL, naming which, before any request', async () => {
    const config = tempDir();
    try {
      const flag = await kennel(['whoami', '--server', 'localhost:'], {
        env: { KENNEL_CONFIG_DIR: config.path },
      });
      assert.equal(flag.code, 2, show(flag));
      assert.match(flag.stderr, /^error: --server "localhost:" has no port after the colon/m);
      assert.match(flag.stderr, /Run 'kennel --help' for help\.\n$/);
      const variable = await kennel(['projects', 'list'], {
        env: { KENNEL_CONFIG_DIR: config.path, KENNEL_URL: '::1:8080', KENNEL_TOKEN: 'knl_x' },
      });
      assert.equal(variable.code, 2, show(variable));
      assert.match(
        variable.stderr,
        /^error: KENNEL_URL "::1:8080" looks like an IPv6 address: put it in brackets/m,
      );
    } finally {
      config.remove();
    }
  });
});

for (const dialect of testDialects()) {
  describe(`kennel --server host:port against a real platform (${dialect})`, () => {
    let server: CliServer;
    let port = 0;
    const config = tempDir();

    before(async () => {
      // Listening on IPv4 and IPv6, so that one platform answers every spelling of loopback.
      server = await startCliServer(dialect, {}, '::');
      port = Number(new URL(server.url).port);
    });
    after(async () => {
      await server?.close();
      config.remove();
    });

    for (const [address, url] of [
      ['localhost:PORT', 'http://localhost:PORT'],
      ['127.0.0.1:PORT', 'http://127.0.0.1:PORT'],
      ['[::1]:PORT', 'http://[::1]:PORT'],
    ] as const) {
      it(`signs in with --server ${address} over plain http, and the saved server is ${url}`, async () => {
        const given = address.replace('PORT', String(port));
        const expected = url.replace('PORT', String(port));
        const login = await kennel(
          ['login', '--server', given, '--email', USERS.owner.email, '--password-stdin'],
          {
            env: { KENNEL_CONFIG_DIR: config.path },
            input: USERS.owner.password,
          },
        );
        assert.equal(login.code, 0, show(login));
        assert.equal(login.stdout.split(' as ')[0], `Signed in to ${expected}`);
        // The saved address is the normalised one, so the next command finds its token.
        const whoami = await kennel(['whoami', '--server', given], {
          env: { KENNEL_CONFIG_DIR: config.path },
        });
        assert.equal(whoami.code, 0, show(whoami));
        assert.match(whoami.stdout, /^owner@x\.test\n/);
        assert.match(
          whoami.stdout,
          new RegExp(`^Server:\\s+${expected.replace(/[.[\]]/g, '\\$&')} \\(from --server\\)$`, 'm'),
        );
      });
    }
  });
}
