import { createSecureContext, type SecureContext } from 'node:tls';
import type { CertificateStore } from '../platform/certificates/certificate-store.ts';

/**
 * SNI → certificate, from memory, filled from the database on first use (CertMagic's cache in
 * front of its storage). A host without a certificate yet gets the default one (the browser's
 * "not private" warning of the seed's troubleshooting table). Issuing, renewing or removing needs
 * no restart: the control plane's change feed clears the entries.
 */
export class CertificateCache {
  readonly #store: CertificateStore;
  readonly #default: SecureContext;
  readonly #entries = new Map<string, SecureContext | null>();
  readonly #loading = new Map<string, Promise<SecureContext | null>>();

  constructor(
    store: CertificateStore,
    defaultCertificate: { certificatePem: string; privateKeyPem: string },
  ) {
    this.#store = store;
    this.#default = createSecureContext({
      cert: defaultCertificate.certificatePem,
      key: defaultCertificate.privateKeyPem,
    });
  }

  /** Forgets everything cached (after a change); the next handshake reloads from the store. */
  clear(): void {
    this.#entries.clear();
  }

  async #context(host: string): Promise<SecureContext | null> {
    if (this.#entries.has(host)) return this.#entries.get(host) ?? null;
    let loading = this.#loading.get(host);
    if (!loading) {
      loading = this.#store
        .load(host)
        .then((stored) =>
          stored ? createSecureContext({ cert: stored.certificatePem, key: stored.privateKeyPem }) : null,
        )
        .finally(() => this.#loading.delete(host));
      this.#loading.set(host, loading);
    }
    const context = await loading;
    if (this.#entries.size > 50_000) this.#entries.clear();
    this.#entries.set(host, context);
    return context;
  }

  async has(host: string): Promise<boolean> {
    return (await this.#context(host)) !== null;
  }

  /** For `tls.createServer({ SNICallback })`. */
  readonly sniCallback = (
    servername: string,
    callback: (error: Error | null, context?: SecureContext) => void,
  ): void => {
    const host = servername.toLowerCase().replace(/\.$/, '');
    this.#context(host).then(
      (context) => callback(null, context ?? this.#default),
      () => callback(null, this.#default),
    );
  };
}
