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
