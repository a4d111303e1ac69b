import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadPlatformConfig, withAllowedOrigins } from '../../src/config/index.ts';

describe('KENNEL_ORIGIN_ALLOWLIST', () => {
  it('is empty by default and reads origins, normalised as URL.origin writes them', () => {
    assert.deepEqual(loadPlatformConfig({}).originAllowlist, []);
    assert.deepEqual(
      loadPlatformConfig({
        KENNEL_ORIGIN_ALLOWLIST: 'http://127.0.0.1:4010, HTTPS://Internal.Example:443/ ,http://[::1]:80,',
      }).originAllowlist,
      ['http://127.0.0.1:4010', 'https://internal.example', 'http://[::1]'],
    );
  });

  it('refuses what is not an origin, naming the setting', () => {
    assert.throws(
      () => loadPlatformConfig({ KENNEL_ORIGIN_ALLOWLIST: 'http://127.0.0.1:4010,http://10.0.0.5:8080/api' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(
          error.message,
          [
            'Invalid configuration:',
            '  - KENNEL_ORIGIN_ALLOWLIST="http://127.0.0.1:4010,http://10.0.0.5:8080/api" is not valid: "http://10.0.0.5:8080/api" is not an origin: write scheme://host:port, e.g. http://127.0.0.1:4010',
          ].join('\n'),
        );
        return true;
      },
    );
    assert.throws(() => loadPlatformConfig({ KENNEL_ORIGIN_ALLOWLIST: '10.0.0.5:8080' }), ConfigError);
  });

  it('takes more origins from the platform itself (the bundled Petstore), once each', () => {
    const config = loadPlatformConfig({ KENNEL_ORIGIN_ALLOWLIST: 'http://10.0.0.5:8080' });
    const more = withAllowedOrigins(config, 'http://127.0.0.1:4010', 'http://10.0.0.5:8080/');
    assert.deepEqual(more.originAllowlist, ['http://10.0.0.5:8080', 'http://127.0.0.1:4010']);
    assert.deepEqual(
      config.originAllowlist,
      ['http://10.0.0.5:8080'],
      'the loaded configuration is unchanged',
    );
    assert.ok(Object.isFrozen(more) && Object.isFrozen(more.originAllowlist));
    assert.equal(more.httpPort, config.httpPort);
  });
});
