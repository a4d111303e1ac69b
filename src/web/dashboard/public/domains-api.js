// @ts-check
import { api, domainPath, slugPath } from './api.js';

/**
 * The Domains API as the page uses it: the shapes of its answers (docs/platform-api.md, the
 * management API's OpenAPI document) and one function per call.
 */

/** @typedef {'unverified' | 'verified' | 'issuing' | 'live' | 'failed'} DomainStatus */
/** @typedef {301 | 302 | 307 | 308} RedirectStatus */

/**
 * @typedef {object} DnsRecord
 * @property {'CNAME' | 'ALIAS' | 'A' | 'AAAA' | 'TXT'} type
 * @property {string} name
 * @property {string} value
 * @property {number} ttl
 * @property {'required' | 'alternative' | 'ownership'} role
 * @property {string} [note]
 */

/**
 * @typedef {object} Certificate
 * @property {string} state
 * @property {string | null} notAfter
 * @property {string | null} [nextAttemptAt]
 * @property {string | null} [reason]
 */

/**
 * @typedef {object} Domain
 * @property {string} hostname ASCII (punycode)
 * @property {string} unicode as people read it
 * @property {'apex' | 'subdomain'} kind
 * @property {'unverified' | 'verified' | 'misconfigured' | 'removed'} state
 * @property {string | null} reason
 * @property {string | null} message
 * @property {string | null} remedy
 * @property {DnsRecord[]} records
 * @property {string | null} lastCheckedAt
 * @property {string | null} nextCheckAt
 * @property {string | null} checksUntil
 * @property {string} createdAt
 * @property {string | null} reverifyAvailableAt
 * @property {boolean} reverifyAvailable
 * @property {Certificate | null} certificate
 * @property {DomainStatus} status
 * @property {{ reason: string, message: string | null, remedy: string } | null} failure
 */

/** @typedef {{ from: string, to: string, status: RedirectStatus }} Redirect */
/** @typedef {{ yaml: string, primary: string | null, redirects: Redirect[] }} DomainConfig */

/** @typedef {{ ok: boolean, reason: string, message: string, remedy: string }} CheckOutcome */

/**
 * @typedef {object} AddedDomain
 * @property {Domain} domain
 * @property {{ code: string, message: string }[]} warnings
 * @property {{ check: CheckOutcome, caa: CheckOutcome }} dns
 */

/** @typedef {import('./types.js').Project} Project */
/** @typedef {import('./types.js').Me} Me */

/** @param {string} slug */
export function domainsApi(slug) {
  return {
    /** @returns {Promise<Domain[]>} */
    list: () => api('GET', `${slugPath(slug)}/domains`),
    /** @returns {Promise<DomainConfig>} */
    config: () => api('GET', `${slugPath(slug)}/domain-config`),
    /**
     * @param {string} hostname
     * @returns {Promise<AddedDomain>}
     */
    add: (hostname) => api('POST', `${slugPath(slug)}/domains`, { hostname }),
    /**
     * @param {string} hostname
     * @param {'verify' | 'reverify'} action
     * @returns {Promise<{ domain: Domain, outcome: CheckOutcome }>}
     */
    check: (hostname, action) => api('POST', `${domainPath(slug, hostname)}/${action}`),
    /** @param {string} hostname */
    remove: (hostname) => api('DELETE', domainPath(slug, hostname)),
    /**
     * Sets the primary and the redirects through the YAML configuration API. JSON is YAML, so
     * the form's values go as JSON text; names are left out, so no domain is added or removed.
     * @param {{ primary: string | null, redirects: Redirect[] }} config
     * @returns {Promise<DomainConfig & { added: string[], removed: string[] }>}
     */
    applyConfig: (config) =>
      api('PUT', `${slugPath(slug)}/domain-config`, {
        yaml: JSON.stringify({ domains: { primary: config.primary, redirects: config.redirects } }, null, 2),
      }),
  };
}

/** @typedef {ReturnType<typeof domainsApi>} DomainsApi */
