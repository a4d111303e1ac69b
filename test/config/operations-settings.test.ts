import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadPlatformConfig } from '../../src/config/index.ts';

describe('operations settings: METRICS_PORT, METRICS_HOST, SHUTDOWN_TIMEOUT', () => {
  it('defaults to a loopback operator listener on 9464 and a 30 s drain', () => {
    const config = loadPlatformConfig({});
    assert.equal(config.metricsPort, 9464);
    assert.equal(config.metricsHost, '127.0.0.1');
    assert.equal(config.shutdownTimeoutMs, 30_000);
  });

  it('reads a port, off, an address and a duration', () => {
    const config = loadPlatformConfig({
      METRICS_PORT: 'off',
      METRICS_HOST: '10.0.0.11',
      SHUTDOWN_TIMEOUT: '500ms',
    });
    assert.equal(config.metricsPort, 'off');
    assert.equal(config.metricsHost, '10.0.0.11');
    assert.equal(config.shutdownTimeoutMs, 500);
    assert.equal(loadPlatformConfig({ METRICS_PORT: '0' }).metricsPort, 0);
  });

  it('refuses bad values, naming each setting and what is allowed', () => {
    assert.throws(
      () => loadPlatformConfig({ METRICS_PORT: '70000', METRICS_HOST: 'a b', SHUTDOWN_TIMEOUT: '30' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(
          error.message,
          [
            'Invalid configuration:',
            '  - SHUTDOWN_TIMEOUT="30" is not valid: expected a duration such as 500ms, 30s, 30m, 48h or 2d',
            '  - METRICS_PORT="70000" is not valid: expected a port from 0 to 65535, or off',
            '  - METRICS_HOST="a b" is not valid: expected a hostname or IP address to listen on',
          ].join('\n'),
        );
        return true;
      },
    );
  });
});

describe('request deadlines: HEADERS_TIMEOUT, RECEIVE_TIMEOUT', () => {
  it('default to 10 s for headers and 60 s for a whole request, and read durations', () => {
    const config = loadPlatformConfig({});
    assert.deepEqual([config.headersTimeoutMs, config.receiveTimeoutMs], [10_000, 60_000]);
    const set = loadPlatformConfig({ HEADERS_TIMEOUT: '300ms', RECEIVE_TIMEOUT: '2m' });
    assert.deepEqual([set.headersTimeoutMs, set.receiveTimeoutMs], [300, 120_000]);
  });

  it('refuses values out of range, or a whole-request deadline shorter than the headers one', () => {
    assert.throws(
      () => loadPlatformConfig({ HEADERS_TIMEOUT: '50ms', RECEIVE_TIMEOUT: '2h' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          [
            'Invalid configuration:',
            '  - HEADERS_TIMEOUT="50ms" is not valid: expected a duration from 100ms to 10m',
            '  - RECEIVE_TIMEOUT="2h" is not valid: expected a duration from 100ms to 1h',
          ].join('\n'),
    );
    assert.throws(
      () => loadPlatformConfig({ HEADERS_TIMEOUT: '20s', RECEIVE_TIMEOUT: '15s' }),
      /RECEIVE_TIMEOUT must be at least HEADERS_TIMEOUT/,
    );
  });
});
