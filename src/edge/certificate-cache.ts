import { createSecureContext, type SecureContext } from 'node:tls';
import type { CertificateStore } from '../platform/certificates/certificate-store.ts';
import type { DefaultAddressCertificates } from '../platform/certificates/default-addresses.ts';
import { TLS_SETTINGS } from './tls-settings.ts';

interface Pems {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
}

/**
 * What a host gets: a certificate from the store (`stored`: issued for a verified domain, or the
 * platform domain's ACME one) or one issued on first use for a project's default address. Only a
 * stored certificate sends the host's plain HTTP to HTTPS. `renewAt` (epoch ms) is set for the
 * issued ones: nothing announces their renewal, so the cache notices the time itself.
 */
interface Entry {
  readonly context: SecureContext;
  readonly stored: boolean;
  readonly renewAt: number;
}

/** Default-address certificates kept at most (one per published project that was visited). */
const MAX_ISSUED = 10_000;

const contextOf = (pems: Pems) =>
  createSecureContext({ ...TLS_SETTINGS, cert: pems.certificatePem, key: pems.privateKeyPem });

/**
 * SNI → certificate, from memory, filled from the database on first use (CertMagic's cache in
 * front of its storage). A host without a certificate gets the fallback one: the platform
 * domain's (the browser's "not private" warning of the seed's troubleshooting table), which is its
 * stored ACME certificate once there is one, else the internal default. Issuing, renewing or
 * removing needs no restart: the control plane's change feed clears the entries.
 */
export class CertificateCache {
  readonly #store: CertificateStore;
  readonly #default: { pems: Pems; context: SecureContext };
  readonly #platformDomain: string | undefined;
  readonly #addresses: DefaultAddressCertificates | undefined;
  readonly #entries = new Map<string, Entry | null>();
  readonly #loading = new Map<string, Promise<Entry | null>>();
  /** Default-address certificates: kept across clear(), which only drops the database's answers. */
  readonly #issued = new Map<string, Entry>();
  #fallback: { pems: Pems; context: SecureContext };
  readonly #fallbackListeners: ((certificate: Pems) => void)[] = [];
  /**
   * Bumped by clear(): a load that started before a change may have read the old row, so its
   * result is handed to the handshake that asked but never cached.
   */
  #generation = 0;

  constructor(
    store: CertificateStore,
    defaultCertificate: Pems,
    options: {
      /** Its stored certificate, once there is one, replaces the default as the fallback. */
      platformDomain?: string;
      /** Issues certificates for projects' default addresses on first use. */
      defaultAddresses?: DefaultAddressCertificates;
    } = {},
  ) {
    this.#store = store;
    this.#default = { pems: defaultCertificate, context: contextOf(defaultCertificate) };
    this.#fallback = this.#default;
    this.#platformDomain = options.platformDomain;
    this.#addresses = options.defaultAddresses;
    this.#refreshFallback();
  }

  /** Forgets everything cached (after a change); the next handshake reloads from the store. */
  clear(): void {
    this.#entries.clear();
    this.#loading.clear();
    this.#generation++;
    this.#refreshFallback();
  }

  /**
   * Called with the new fallback certificate whenever it changes (the TLS listener serves it to
   * handshakes without SNI, for which no callback runs).
   */
  onFallback(listener: (certificate: Pems) => void): void {
    this.#fallbackListeners.push(listener);
  }

  /** The fallback follows the platform domain's stored certificate (none: the default). */
  #refreshFallback(): void {
    const domain = this.#platformDomain;
    if (domain === undefined) return;
    const generation = this.#generation;
    this.#store.load(domain).then(
      (stored) => {
        if (generation !== this.#generation) return; // a later refresh decides
        const next = stored ? { pems: stored, context: contextOf(stored) } : this.#default;
        if (next.pems.certificatePem === this.#fallback.pems.certificatePem) return;
        this.#fallback = next;
        for (const listener of this.#fallbackListeners) listener(next.pems);
      },
      // Keeps the current fallback; the next change retries.
      () => {},
    );
  }

  /** The cached answer (null: no certificate), or the load of the host's certificate. */
  #context(host: string): Entry | null | Promise<Entry | null> {
    const cached = this.#entries.get(host);
    if (cached === null || (cached !== undefined && (cached.stored || cached.renewAt > Date.now())))
      return cached;
    let loading = this.#loading.get(host);
    if (!loading) {
      const generation = this.#generation;
      const started: Promise<Entry | null> = this.#load(host)
        .then((entry) => {
          if (generation === this.#generation) {
            if (this.#entries.size > 50_000) this.#entries.clear();
            this.#entries.set(host, entry);
          }
          return entry;
        })
        .finally(() => {
          if (this.#loading.get(host) === started) this.#loading.delete(host);
        });
      this.#loading.set(host, started);
      loading = started;
    }
    return loading;
  }

  async #load(host: string): Promise<Entry | null> {
    const stored = await this.#store.load(host);
    if (stored) return { context: contextOf(stored), stored: true, renewAt: Number.POSITIVE_INFINITY };
    const addresses = this.#addresses;
    if (!addresses || addresses.slugOf(host) === undefined || !(await addresses.serves(host))) return null;
    const issued = this.#issued.get(host);
    if (issued && issued.renewAt > Date.now()) return issued;
    const certificate = await addresses.issue(host);
    const lifetime = certificate.notAfter.getTime() - certificate.notBefore.getTime();
    const entry: Entry = {
      context: contextOf(certificate),
      stored: false,
      // Renewed when a third of the lifetime remains, as the certificate job renews.
      renewAt: certificate.notAfter.getTime() - lifetime / 3,
    };
    this.#issued.delete(host);
    if (this.#issued.size >= MAX_ISSUED) {
      // The oldest issued goes; it is issued again if its project is visited again.
      const oldest = this.#issued.keys().next();
      if (!oldest.done) this.#issued.delete(oldest.value);
    }
    this.#issued.set(host, entry);
    return entry;
  }

  /**
   * Whether the host has a stored certificate (a default address's issued one does not count:
   * its plain HTTP stays served). Answered without a promise once cached: the edge asks on every
   * plain HTTP request (to redirect to HTTPS), so the cached path is kept allocation-free.
   */
  has(host: string): boolean | Promise<boolean> {
    const entry = this.#context(host);
    return entry instanceof Promise
      ? entry.then((loaded) => loaded?.stored === true)
      : entry?.stored === true;
  }

  /** For `tls.createServer({ SNICallback })`. */
  readonly sniCallback = (
    servername: string,
    callback: (error: Error | null, context?: SecureContext) => void,
  ): void => {
    const host = servername.toLowerCase().replace(/\.$/, '');
    const entry = this.#context(host);
    if (!(entry instanceof Promise)) {
      // Cached (the usual handshake): answered at once, without a promise round trip.
      callback(null, entry?.context ?? this.#fallback.context);
      return;
    }
    entry.then(
      (loaded) => callback(null, loaded?.context ?? this.#fallback.context),
      () => callback(null, this.#fallback.context),
    );
  };
}
