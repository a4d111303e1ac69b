import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { managementDocument } from '../../src/platform/api/app.ts';
import { redoclyFindings, spectralFindings } from '../support/openapi-lint.ts';

/**
 * The management API's document (served at /api/v1/openapi.json) passes the linters people run on
 * OpenAPI documents, with no error, warning, info or hint (exceptions only as documented in
 * `.spectral.yaml` and `redocly.yaml`).
 */
describe('the management API document under the OpenAPI linters', () => {
  const document = managementDocument();

  it('Spectral (spectral:oas) finds nothing', async () => {
    assert.deepEqual(await spectralFindings(document, 'management.json'), []);
  });

  it('Redocly (recommended) finds nothing', async () => {
    assert.deepEqual(await redoclyFindings(document, 'management.json'), []);
  });
});
