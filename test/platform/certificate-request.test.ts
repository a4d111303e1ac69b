import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  newCertificateRequest,
  obtainCertificate,
} from '../../src/platform/certificates/certificate-request.ts';
import { createInternalCa, InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { type ChallengeStore, type Issuer, IssuerError } from '../../src/platform/certificates/issuer.ts';

const NO_CHALLENGES: ChallengeStore = { put: async () => {}, remove: async () => {} };

describe('the manager makes the key and the CSR; issuers only sign', () => {
  it('has the internal CA sign the CSR: the leaf carries the manager’s key and only the name asked', async () => {
    const issuer = new InternalIssuer(await createInternalCa('Test CA'));
    const { privateKeyPem, csrPem } = await newCertificateRequest('shop.example.test');
    const chain = await issuer.issue({ hostname: 'shop.example.test', csrPem }, NO_CHALLENGES);
    assert.equal('privateKeyPem' in chain, false, 'an issuer hands back no key');
    const leaf = new X509Certificate(chain.certificatePem);
    assert.equal(leaf.subjectAltName, 'DNS:shop.example.test');
    assert.equal(leaf.checkPrivateKey(createPrivateKey(privateKeyPem)), true);
    assert.equal(chain.issuer, 'internal');
  });

  it('has the internal CA refuse, not retryable, a CSR naming another host than the one asked', async () => {
    const issuer = new InternalIssuer(await createInternalCa('Test CA'));
    const { csrPem } = await newCertificateRequest('other.example.test');
    await assert.rejects(issuer.issue({ hostname: 'shop.example.test', csrPem }, NO_CHALLENGES), {
      name: 'IssuerError',
      retryable: false,
      message:
        'shop.example.test: the CSR is not signed by its key or does not name exactly shop.example.test',
    });
  });

  it('stores nothing an issuer signed for another key: not retryable', async () => {
    const internal = new InternalIssuer(await createInternalCa('Test CA'));
    // An issuer that ignores the CSR and signs a key of its own.
    const wrong: Issuer = {
      name: 'wrong',
      issue: async ({ hostname }) => {
        const { csrPem } = await newCertificateRequest(hostname);
        return internal.issue({ hostname, csrPem }, NO_CHALLENGES);
      },
    };
    const error = await obtainCertificate(wrong, 'shop.example.test', NO_CHALLENGES).then(
      () => assert.fail('resolved'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof IssuerError);
    assert.deepEqual(
      [error.message, error.retryable],
      ["shop.example.test: the CA's certificate is not for the key in the CSR", false],
    );
  });
});
