// @peculiar/x509 needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { type Issuer, IssuerError, type RenewalWindow } from './issuer.ts';

/**
 * When a certificate is renewed. With ACME Renewal Information (RFC 9773) the CA suggests a window
 * and the manager renews at a random time inside it (CertMagic `ari.go`), so a CA's many
 * certificates do not all come back at once and a revocation (a window moved into the past) is
 * acted on at the next look. Without it, a third of the lifetime before expiry, as before.
 */

/** How long to wait before asking the CA again when it sent no Retry-After (RFC 9773 §4.3.2). */
export const RENEWAL_INFO_DEFAULT_RECHECK_MS = 6 * 3_600_000;
/** Bounds on a Retry-After: not more often than a minute, not less often than a day. */
export const RENEWAL_INFO_MIN_RECHECK_MS = 60_000;
export const RENEWAL_INFO_MAX_RECHECK_MS = 24 * 3_600_000;
/** When asking the CA failed without a Retry-After: again in an hour. */
export const RENEWAL_INFO_FAILED_RECHECK_MS = 3_600_000;

/**
 * RFC 9773 §4.1: base64url(the AKI's keyIdentifier) "." base64url(the serial number's DER value
 * octets, leading zero included), both unpadded.
 */
export function renewalCertId(certificatePem: string): string {
  const leafPem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(certificatePem)?.[0];
  if (leafPem === undefined) throw new Error('no certificate in the PEM');
  const leaf = new x509.X509Certificate(leafPem);
  const aki = leaf.getExtension(x509.AuthorityKeyIdentifierExtension);
  if (aki?.keyId === undefined) throw new Error('the certificate has no authority key identifier');
  const serial = derIntegerOctets(Buffer.from(leaf.serialNumber, 'hex'));
  return `${Buffer.from(aki.keyId, 'hex').toString('base64url')}.${serial.toString('base64url')}`;
}

/**
 * A positive integer's DER content octets: minimal, with a leading zero when the top bit is set
 * (the parser hands the serial back without it).
 */
function derIntegerOctets(magnitude: Buffer): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  return (trimmed[0] ?? 0) >= 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed;
}

/** Two thirds into the lifetime: a third remaining. */
export function thirdRemaining(certificate: { notBefore: Date; notAfter: Date }): Date {
  const lifetime = certificate.notAfter.getTime() - certificate.notBefore.getTime();
  return new Date(certificate.notAfter.getTime() - lifetime / 3);
}

/** A time in the window (`random` in [0, 1)); a window already past means now. */
export function pickRenewalTime(
  window: Pick<RenewalWindow, 'start' | 'end'>,
  now: Date,
  random: number,
): Date {
  const start = window.start.getTime();
  const at = Math.floor(start + random * (window.end.getTime() - start));
  return new Date(Math.max(at, now.getTime()));
}

/** When to ask the CA again: its Retry-After within bounds, else the default. */
export function nextRenewalInfoCheck(now: Date, retryAfterMs: number | undefined): Date {
  const wait =
    retryAfterMs === undefined
      ? RENEWAL_INFO_DEFAULT_RECHECK_MS
      : Math.min(RENEWAL_INFO_MAX_RECHECK_MS, Math.max(RENEWAL_INFO_MIN_RECHECK_MS, retryAfterMs));
  return new Date(now.getTime() + wait);
}

/** When to renew, and when to ask the CA's renewal information again (null: it offers none). */
export interface RenewalPlan {
  readonly renewAt: Date;
  readonly askAgainAt: Date | null;
}

/**
 * The renewal of a certificate just issued (or whose window is looked at again): inside the CA's
 * window when the issuer has one for it, else a third of the lifetime before expiry. `current` is
 * the renewal time already chosen: kept while it lies in the window (RFC 9773 §4.2 asks for one
 * random pick, not a new one at every look).
 */
export async function planRenewal(
  issuer: Pick<Issuer, 'renewalWindow'>,
  certificate: { certificatePem: string; notBefore: Date; notAfter: Date },
  now: Date,
  random: () => number,
  current?: Date,
): Promise<RenewalPlan> {
  const fallback = current ?? thirdRemaining(certificate);
  if (issuer.renewalWindow === undefined) return { renewAt: fallback, askAgainAt: null };
  let window: RenewalWindow | undefined;
  try {
    window = await issuer.renewalWindow(certificate.certificatePem);
  } catch (error) {
    const retryAfterMs = error instanceof IssuerError ? error.retryAfterMs : undefined;
    return {
      renewAt: fallback,
      askAgainAt: nextRenewalInfoCheck(now, retryAfterMs ?? RENEWAL_INFO_FAILED_RECHECK_MS),
    };
  }
  if (window === undefined) return { renewAt: fallback, askAgainAt: null };
  const kept =
    current !== undefined &&
    current.getTime() >= window.start.getTime() &&
    current.getTime() <= window.end.getTime();
  return {
    renewAt: kept ? current : pickRenewalTime(window, now, random()),
    askAgainAt: nextRenewalInfoCheck(now, window.retryAfterMs),
  };
}
