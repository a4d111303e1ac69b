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
  /**
   * Bumped by clear(): a load that started before a change may have read the old row, so its
   * result is handed to the handshake that asked but never cached.
   */
  #generation = 0;

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
    this.#loading.clear();
    this.#generation++;
  }

  /** The cached answer (null: no certificate), or the load of the host's row. */
  #context(host: string): SecureContext | null | Promise<SecureContext | null> {
    const cached = this.#entries.get(host);
    if (cached !== undefined) return cached;
    let loading = this.#loading.get(host);
    if (!loading) {
      const generation = this.#generation;
      const started: Promise<SecureContext | null> = this.#store
        .load(host)
        .then((stored) =>
          stored ? createSecureContext({ cert: stored.certificatePem, key: stored.privateKeyPem }) : null,
        )
        .then((context) => {
          if (generation === this.#generation) {
            if (this.#entries.size > 50_000) this.#entries.clear();
            this.#entries.set(host, context);
          }
          return context;
        })
        .finally(() => {
          if (this.#loading.get(host) === started) this.#loading.delete(host);
        });
      this.#loading.set(host, started);
      loading = started;
    }
    return loading;
  }

  /**
   * Whether the host has a certificate. Answered without a promise once cached: the edge asks on
   * every plain HTTP request (to redirect to HTTPS), so the cached path is kept allocation-free.
   */
  has(host: string): boolean | Promise<boolean> {
    const context = this.#context(host);
    return context instanceof Promise ? context.then((loaded) => loaded !== null) : context !== null;
  }

  /** For `tls.createServer({ SNICallback })`. */
  readonly sniCallback = (
    servername: string,
    callback: (error: Error | null, context?: SecureContext) => void,
  ): void => {
    const host = servername.toLowerCase().replace(/\.$/, '');
    const context = this.#context(host);
    if (!(context instanceof Promise)) {
      // Cached (the usual handshake): answered at once, without a promise round trip.
      callback(null, context ?? this.#default);
      return;
    }
    context.then(
      (context) => callback(null, context ?? this.#default),
      () => callback(null, this.#default),
    );
  };
}
