/**
 * A CLI package that fails to build is remembered for a minute: installs meanwhile get the Error at
 * once instead of each spawning a new build (`npm pack`), and the build is tried again after it.
 * The builder is the real one, on a checkout with no CLI sources; only time is faked.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { createJsonApi, installErrorHandling } from '../../src/lib/http-api/index.ts';
import { buildCliPackage } from '../../src/platform/cli-package/build-cli-package.ts';
import { CLI_BUILD_RETRY_MS, registerCliPackage } from '../../src/platform/cli-package/serve-cli-package.ts';
import { platformErrors } from '../../src/platform/errors.ts';
import { tempDir } from './harness.ts';

describe('a failed CLI package build', () => {
  const emptyCheckout = tempDir('kennel-no-sources-');
  const data = tempDir('kennel-data-');
  const clock = new ManualClock('2026-11-27T06:00:00Z');
  let builds = 0;
  const app = createJsonApi({ bodyLimit: 1024, catalog: platformErrors });
  installErrorHandling(app, [], platformErrors, { bodyLimit: 1024, isDatabaseUnavailable: () => false });
  registerCliPackage(app, {
    root: emptyCheckout.path,
    dataDir: data.path,
    version: '1.2.3',
    clock,
    build: (options) => {
      builds += 1;
      return buildCliPackage(options);
    },
  });
  after(async () => {
    await app.close();
    emptyCheckout.remove();
    data.remove();
  });

  const install = async () => {
    const answer = await app.inject({ method: 'GET', url: '/cli/kennel-cli.tgz' });
    return { status: answer.statusCode, retryAfter: answer.headers['retry-after'], body: answer.json() };
  };
  const failure = (seconds: number) => ({
    status: 500,
    retryAfter: String(seconds),
    body: {
      code: 'internal_error',
      message: `This platform could not build its CLI package; its log has the cause. It tries again in ${seconds} s: install then, or ask its operator to read the log.`,
      status: 500,
    },
  });

  it('answers the Error without building again for a minute, then builds again', async () => {
    assert.deepEqual(await install(), failure(60));
    assert.equal(builds, 1);
    // Concurrent installs and the versioned address share the failure.
    const [a, b] = await Promise.all([
      install(),
      app.inject({ method: 'GET', url: '/cli/kennel-cli-1.2.3.tgz' }),
    ]);
    assert.deepEqual(a, failure(60));
    assert.equal(b.statusCode, 500);
    clock.advance(CLI_BUILD_RETRY_MS - 1_500);
    assert.deepEqual(await install(), failure(2));
    assert.equal(builds, 1, 'no build within the minute');

    clock.advance(1_500);
    assert.deepEqual(await install(), failure(60));
    assert.equal(builds, 2, 'built again once the minute is over');
    assert.deepEqual(await install(), failure(60));
    assert.equal(builds, 2);
  });
});
