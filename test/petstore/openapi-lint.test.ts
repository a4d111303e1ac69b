import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { redoclyFindings, spectralFindings } from '../support/openapi-lint.ts';
import { TEST_DEPRECATION } from '../support/petstore.ts';

/**
 * The served Petstore document passes the linters people run on OpenAPI documents, with no error,
 * warning, info or hint (exceptions only as documented in `.spectral.yaml` and `redocly.yaml`).
 */
describe('the Petstore document under the OpenAPI linters', () => {
  const document = petstoreDocument(TEST_DEPRECATION);

  it('Spectral (spectral:oas) finds nothing', async () => {
    assert.deepEqual(await spectralFindings(document, 'petstore.json'), []);
  });

  it('Redocly (recommended) finds nothing', async () => {
    assert.deepEqual(await redoclyFindings(document, 'petstore.json'), []);
  });
});
