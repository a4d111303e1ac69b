// @peculiar/x509 needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import { randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { obtainCertificate } from './certificate-request.ts';
import {
  type CertificateRequest,
  type ChallengeStore,
  type IssuedCertificate,
  type IssuedChain,
  type Issuer,
  IssuerError,
} from './issuer.ts';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface InternalCa {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
}

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

function der(pemText: string): ArrayBuffer {
  const body = pemText.replace(/-----(BEGIN|END) [^-]+-----/g, '').replace(/\s+/g, '');
  const buffer = Buffer.from(body, 'base64');
  return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
}

const serial = () => `01${randomBytes(15).toString('hex')}`;

/** A new root for the internal CA (like Caddy's `tls internal`), valid ten years. */
export async function createInternalCa(name = 'Kennel Local CA', now = new Date()): Promise<InternalCa> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name}`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 3650 * DAY),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certificatePem: certificate.toString('pem'),
    privateKeyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
  };
}

const SUBJECT_ALT_NAME = '2.5.29.17';

/**
 * Issues certificates from a local root: no network, no challenge, no CAA (no CA identity to
 * check). Users trust the root (exported by `kennel ca` / GET /api/v1/ca.pem) to get a browser's
 * padlock on local domains. Offers no renewal information: renewal comes at a third remaining.
 */
export class InternalIssuer implements Issuer {
  readonly name = 'internal';
  readonly #ca: InternalCa;
  readonly #lifetimeMs: number;
  readonly #now: () => Date;

  constructor(ca: InternalCa, options: { lifetimeMs?: number; now?: () => Date } = {}) {
    this.#ca = ca;
    this.#lifetimeMs = options.lifetimeMs ?? 30 * DAY;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * With a hostname: a certificate and its key in one step, through the manager's own path
   * (certificate-request.ts) — for the platform's in-memory default certificate and for tests.
   * With a request: signs the manager's CSR, which must be signed by its key and name exactly
   * the requested hostname.
   */
  issue(hostname: string): Promise<IssuedCertificate>;
  issue(request: CertificateRequest, challenges?: ChallengeStore): Promise<IssuedChain>;
  async issue(
    what: string | CertificateRequest,
    _challenges?: ChallengeStore,
  ): Promise<IssuedChain | IssuedCertificate> {
    if (typeof what === 'string') return obtainCertificate(this, what, NO_CHALLENGES);
    return this.#sign(what);
  }

  async #sign({ hostname, csrPem }: CertificateRequest): Promise<IssuedChain> {
    const csr = new x509.Pkcs10CertificateRequest(csrPem);
    const san = csr.getExtension(SUBJECT_ALT_NAME);
    const names =
      san === null
        ? []
        : new x509.SubjectAlternativeNameExtension(san.rawData).names.items.map((n) => n.value);
    if (!(await csr.verify()) || names.length !== 1 || names[0] !== hostname) {
      throw new IssuerError(
        `${hostname}: the CSR is not signed by its key or does not name exactly ${hostname}`,
        {
          retryable: false,
        },
      );
    }
    const caCert = new x509.X509Certificate(this.#ca.certificatePem);
    const caKey = await webcrypto.subtle.importKey('pkcs8', der(this.#ca.privateKeyPem), ALGORITHM, false, [
      'sign',
    ]);
    const now = this.#now();
    const notBefore = new Date(now.getTime() - 60_000);
    const notAfter = new Date(now.getTime() + this.#lifetimeMs);
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${hostname}`,
      issuer: caCert.subject,
      notBefore,
      notAfter,
      signingAlgorithm: ALGORITHM,
      publicKey: csr.publicKey,
      signingKey: caKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: hostname }]),
        await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ],
    });
    const certificatePem = `${leaf.toString('pem')}\n`;
    // Check what we produced with the platform's own X.509 parser before handing it out.
    const parsed = new X509Certificate(certificatePem);
    return {
      certificatePem,
      notBefore: new Date(parsed.validFrom),
      notAfter: new Date(parsed.validTo),
      issuer: this.name,
    };
  }
}

/** The internal CA asks no challenge. */
const NO_CHALLENGES: ChallengeStore = {
  put: async () => {},
  remove: async () => {},
};
