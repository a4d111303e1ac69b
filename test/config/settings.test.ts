import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadPetstoreConfig } from '../../src/config/index.ts';

describe('Petstore configuration', () => {
  it('has defaults for everything', () => {
    const config = loadPetstoreConfig({});
    assert.equal(config.port, 4010);
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.sunsetAt.toISOString(), '2027-06-30T00:00:00.000Z');
    assert.ok(Object.isFrozen(config));
  });

  it('gives requests deadlines by default: headers in 10 s, the whole request in 30 s', () => {
    const config = loadPetstoreConfig({});
    assert.equal(config.headersTimeoutMs, 10_000);
    assert.equal(config.receiveTimeoutMs, 30_000);
    const set = loadPetstoreConfig({
      PETSTORE_HEADERS_TIMEOUT_MS: '2000',
      PETSTORE_RECEIVE_TIMEOUT_MS: '5000',
    });
    assert.deepEqual([set.headersTimeoutMs, set.receiveTimeoutMs], [2000, 5000]);
  });

  it('reads and validates each setting', () => {
    const config = loadPetstoreConfig({
      PORT: '8081',
      DATA_DIR: '/var/lib/kennel',
      DATABASE_URL: 'postgres://kennel@db:5432/kennel',
      PETSTORE_GET_PET_SUNSET: '2028-01-31',
    });
    assert.equal(config.port, 8081);
    assert.equal(config.dataDir, '/var/lib/kennel');
    assert.equal(config.databaseUrl, 'postgres://kennel@db:5432/kennel');
    assert.equal(config.sunsetAt.toISOString(), '2028-01-31T00:00:00.000Z');
  });

  const bad: [env: Record<string, string>, message: RegExp][] = [
    [{ PORT: 'eighty' }, /PORT="eighty" is not valid: expected a port number from 0 to 65535/],
    [{ PORT: '70000' }, /PORT="70000" is not valid/],
    [
      { DATABASE_URL: 'mysql://x@y/z' },
      /DATABASE_URL="mysql:\/\/x@y\/z" is not valid: expected a postgres:\/\//,
    ],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL="not a url" is not valid/],
    [
      { LOG_LEVEL: 'loud' },
      /LOG_LEVEL="loud" is not valid: expected one of: fatal, error, warn, info, debug, trace, silent/,
    ],
    [
      { PETSTORE_GET_PET_SUNSET: '2027-02-30' },
      /PETSTORE_GET_PET_SUNSET="2027-02-30" is not valid: expected a date/,
    ],
    [{ PETSTORE_GET_PET_SUNSET: '2026-01-01' }, /PETSTORE_GET_PET_SUNSET \(2026-01-01\) must be after/],
    [
      { PETSTORE_HEADERS_TIMEOUT_MS: '10s' },
      /PETSTORE_HEADERS_TIMEOUT_MS="10s" is not valid: expected a whole number/,
    ],
    [
      { PETSTORE_RECEIVE_TIMEOUT_MS: '50' },
      /PETSTORE_RECEIVE_TIMEOUT_MS="50" is not valid: expected a whole number from 100/,
    ],
    [
      { PETSTORE_HEADERS_TIMEOUT_MS: '20000', PETSTORE_RECEIVE_TIMEOUT_MS: '15000' },
      /PETSTORE_RECEIVE_TIMEOUT_MS \(15000\) must be at least PETSTORE_HEADERS_TIMEOUT_MS \(20000\)/,
    ],
    [
      { PETSTORE_RATE_LIMIT_SCOPE: 'cluster' },
      /PETSTORE_RATE_LIMIT_SCOPE=cluster needs a PostgreSQL database shared by the processes: set DATABASE_URL/,
    ],
    [
      { PETSTORE_RATE_LIMIT_SCOPE: 'global' },
      /PETSTORE_RATE_LIMIT_SCOPE="global" is not valid: expected one of: auto, node, cluster/,
    ],
    [
      { PETSTORE_RATE_LIMIT_LEASE: '0' },
      /PETSTORE_RATE_LIMIT_LEASE="0" is not valid: expected a whole number from 1/,
    ],
  ];
  for (const [env, message] of bad) {
    it(`refuses ${JSON.stringify(env)}`, () => {
      assert.throws(
        () => loadPetstoreConfig(env),
        (error) => error instanceof ConfigError && message.test(error.message),
      );
    });
  }

  it('reports every bad setting at once', () => {
    assert.throws(
      () => loadPetstoreConfig({ PORT: 'x', LOG_LEVEL: 'y' }),
      (error) =>
        error instanceof ConfigError && /PORT=/.test(error.message) && /LOG_LEVEL=/.test(error.message),
    );
  });

  it('stops the process with exit code 2 and names the setting', () => {
    const result = spawnSync(process.execPath, [join(import.meta.dirname, '../../src/main/petstore.ts')], {
      env: { PATH: process.env.PATH ?? '', PORT: 'nope' },
      encoding: 'utf8',
      timeout: 15_000,
    });
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /Invalid configuration:\n {2}- PORT="nope" is not valid: expected a port number/,
    );
  });
});
