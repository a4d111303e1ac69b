// @ts-check
/**
 * What the Domains page says, in words: status badges, reasons, redirects, the records heading.
 * No machine code (`not_found_yet`) is shown as text; cards carry it in data attributes. This
 * module has no DOM, so test/web/dashboard-domains.test.ts imports it to check that every reason
 * the server can give has words here.
 */

/** @typedef {import('./domains-api.js').Domain} Domain */
/** @typedef {import('./domains-api.js').DomainStatus} DomainStatus */
/** @typedef {import('./domains-api.js').RedirectStatus} RedirectStatus */

/** Badge text per API status; the same words as DOMAIN_STATUS_LABELS on the server. */
/** @type {Record<DomainStatus, string>} */
export const STATUS_LABELS = {
  unverified: 'Unverified',
  verified: 'Verified',
  issuing: 'Certificate being issued',
  live: 'Live',
  failed: 'Failed',
};

/**
 * Every reason a domain can carry (DNS_CHECK_REASONS, DOMAIN_REASONS, caa_forbids,
 * certificate_failed) and every notice code, as a short phrase.
 * @type {Record<string, string>}
 */
export const REASON_LABELS = {
  verified: 'DNS points here',
  permitted: 'CAA records allow the certificate',
  not_found_yet: 'Record not found yet',
  cname_mismatch: 'The CNAME points elsewhere',
  conflicting_record: 'A conflicting record blocks the CNAME',
  address_mismatch: 'The addresses point elsewhere',
  ownership_token_missing: 'The ownership record is missing',
  caa_forbids: 'A CAA record blocks the certificate',
  dns_error: 'The domain’s DNS servers did not answer',
  hostname_taken: 'Another project serves this hostname',
  taken_over: 'Another project took this hostname',
  checks_stopped: 'Automatic checks stopped',
  certificate_failed: 'The certificate was not issued',
  mixed_scripts: 'The name mixes alphabets',
};

/** @param {string | null | undefined} reason */
export function reasonLabel(reason) {
  if (!reason) return '';
  return REASON_LABELS[reason] ?? 'Something needs attention';
}

/**
 * A phrase continuing a sentence: only its first letter lowered, so CNAME and CAA stay as they are.
 * @param {string} text
 */
export const lowerFirst = (text) => text.charAt(0).toLowerCase() + text.slice(1);

/**
 * The platform's remedies are written for every client ("the record listed for this domain");
 * on this page the record is right below.
 * @param {string} text
 */
export function inPage(text) {
  return text.replaceAll(' listed for this domain', ' shown below');
}

/** What each redirect status means, for the form's choices. */
/** @type {Record<RedirectStatus, string>} */
export const REDIRECT_STATUS_LABELS = {
  301: '301 · moved permanently',
  308: '308 · permanent, keeps the method',
  302: '302 · temporary',
  307: '307 · temporary, keeps the method',
};

/**
 * @param {string} to the target as people read it
 * @param {RedirectStatus} status
 */
export function redirectLabel(to, status) {
  return `Redirects to ${to} (${status})`;
}

/**
 * Why a draft of redirects cannot be saved, naming the hosts involved, or null when it can. The
 * configuration refuses chains (a redirect to a host that itself redirects) and loops, as the
 * server does (src/platform/domains/domain-config.ts); a loop is told as one, since "point A
 * straight at" the end of a loop would point A at itself.
 * @param {Iterable<[string, string]>} redirects from → to, in the order the form shows them
 * @param {(host: string) => string} [name] how a hostname is shown (its Unicode form)
 * @returns {string | null}
 */
export function redirectProblem(redirects, name = (host) => host) {
  const to = new Map(redirects);
  // Loops first: a chain that ends in a loop is fixed by breaking the loop.
  for (const from of to.keys()) {
    /** @type {string[]} */
    const path = [from];
    let next = to.get(from);
    while (next !== undefined && !path.includes(next)) {
      path.push(next);
      next = to.get(next);
    }
    if (next === undefined) continue;
    const loop = path.slice(path.indexOf(next)).map(name);
    if (loop.length === 1) return `${loop[0]} would redirect to itself: let it serve the project.`;
    if (loop.length === 2)
      return `${loop[0]} and ${loop[1]} would redirect to each other, a loop: let one of them serve the project (“Serves the project”), and the other redirect to it.`;
    return `${[...loop, loop[0]].join(' → ')} is a redirect loop: let one of them serve the project (“Serves the project”), and the others redirect to it.`;
  }
  for (const [from, target] of to) {
    const next = to.get(target);
    if (next === undefined) continue;
    let end = next;
    for (let hop = to.get(end); hop !== undefined; hop = to.get(end)) end = hop;
    return `${name(from)} would redirect to ${name(target)}, which itself redirects to ${name(next)}: point ${name(from)} straight at ${name(end)}.`;
  }
  return null;
}

/** @param {number} count @param {string} one @param {string} many */
export const plural = (count, one, many) => (count === 1 ? one : many);

/**
 * The records a person creates: the alternatives (A/AAAA instead of ALIAS) replace a record
 * rather than add one, so they do not count.
 * @param {Domain} domain
 */
export function recordCount(domain) {
  return domain.records.filter((r) => r.role !== 'alternative').length || domain.records.length;
}

/**
 * The records' heading: to create while the domain is not served, in use once it is.
 * @param {Domain} domain
 */
export function recordsHeading(domain) {
  const many = domain.records.length > 1;
  if (domain.state === 'verified') return many ? 'DNS records in use' : 'DNS record in use';
  if (domain.state === 'misconfigured') return many ? 'DNS records to restore' : 'DNS record to restore';
  return many ? 'DNS records to create' : 'DNS record to create';
}

/**
 * The sentence under the domain's name: what is going on and what to do next.
 * @param {Domain} domain
 */
export function statusSentence(domain) {
  const record = plural(recordCount(domain), 'the DNS record below', 'the DNS records below');
  switch (domain.status) {
    case 'unverified':
      return `Create ${record} at your DNS provider, then click Verify. DNS is also checked automatically.`;
    case 'verified':
      return 'DNS verified. The SSL certificate is ordered in a moment.';
    case 'issuing':
      return 'DNS verified. The SSL certificate is being issued; this usually takes a couple of minutes.';
    case 'live':
      return `Live: served over HTTPS with its own certificate, renewed automatically. Keep ${record} in place.`;
    default:
      return domain.state === 'misconfigured'
        ? `Still served, but DNS no longer points here: the certificate would fail to renew. Restore ${record}.`
        : 'This domain needs your attention.';
  }
}
