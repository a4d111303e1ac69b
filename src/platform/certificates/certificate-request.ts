import { createPrivateKey, X509Certificate } from 'node:crypto';
import { crypto as acmeCrypto } from 'acme-client';
import type { ChallengeStore, IssuedCertificate, Issuer } from './issuer.ts';
import { IssuerError } from './issuer.ts';

/**
 * The manager's half of an order (CertMagic `obtainCert`): a new key per certificate, a CSR naming
 * one hostname, the issuer's signature, and a check that what came back is for that key and that
 * name before anything stores it. Keys never reach an issuer.
 */

/** A new ECDSA P-256 key (PKCS#8 PEM) and a CSR for `hostname` signed by it. */
export async function newCertificateRequest(
  hostname: string,
): Promise<{ privateKeyPem: string; csrPem: string }> {
  const privateKeyPem = (await acmeCrypto.createPrivateEcdsaKey('P-256')).toString();
  // The CN is left out past 64 characters, the most X.509 allows in it.
  const [, csr] = await acmeCrypto.createCsr(
    hostname.length <= 64 ? { commonName: hostname, altNames: [hostname] } : { altNames: [hostname] },
    privateKeyPem,
  );
  return { privateKeyPem, csrPem: csr.toString() };
}

/** Makes a key and a CSR for `hostname`, has `issuer` sign it, and checks the leaf. */
export async function obtainCertificate(
  issuer: Pick<Issuer, 'issue'>,
  hostname: string,
  challenges: ChallengeStore,
): Promise<IssuedCertificate> {
  const { privateKeyPem, csrPem } = await newCertificateRequest(hostname);
  const chain = await issuer.issue({ hostname, csrPem }, challenges);
  const leafPem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(
    chain.certificatePem,
  )?.[0];
  if (leafPem === undefined) {
    throw new IssuerError(`${hostname}: the CA's certificate download held no certificate`, {
      retryable: true,
    });
  }
  const leaf = new X509Certificate(leafPem);
  if (!leaf.checkPrivateKey(createPrivateKey(privateKeyPem))) {
    throw new IssuerError(`${hostname}: the CA's certificate is not for the key in the CSR`, {
      retryable: false,
    });
  }
  if (leaf.checkHost(hostname, { subject: 'never' }) === undefined) {
    throw new IssuerError(`${hostname}: the CA's certificate does not name ${hostname}`, {
      retryable: false,
    });
  }
  return { ...chain, privateKeyPem };
}
