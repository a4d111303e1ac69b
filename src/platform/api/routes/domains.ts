import { addDomain } from '../../domains/add-domain.ts';
import { applyDomainConfig, readDomainConfig } from '../../domains/apply-domain-config.ts';
import { inspectDomain, listDomains } from '../../domains/read-domains.ts';
import { removeDomain } from '../../domains/remove-domain.ts';
import { reverifyDomain, verifyDomain } from '../../domains/verify-domain.ts';
import { actorOf } from '../auth.ts';
import { operations } from '../operation.ts';
import { answerCreated, inProject, passing, thenNoContent } from './answers.ts';
import { created, jsonBody, noContent, ok } from './contract.ts';

const base = '/api/v1/projects/{slug}/domains';
/** A handler answering what `act` does for the caller with the path's domain. */
const inDomain = passing('slug', 'hostname');

export const domainRoutes = operations('Domains', {
  listDomains: {
    route: `GET ${base}`,
    summary: 'List domains',
    description: "The project's custom domains with their state and the DNS records to create.",
    responses: ok('Domains', ['Domain']),
    handler: inProject(listDomains),
  },
  addDomain: {
    route: `POST ${base}`,
    summary: 'Add a domain',
    description:
      'Adds a custom domain (Pro plan or above, after a successful deploy). The answer carries the DNS records to create and what DNS shows now (a conflicting record, a CAA record that would block the CA).',
    requestBody: jsonBody('The hostname', 'NewDomain'),
    responses: created('The domain, unverified', 'AddedDomain'),
    errors: [
      'plan_required',
      'deploy_required',
      'domain_limit_reached',
      'domain_already_added',
      'invalid_hostname',
      'hostname_ip_address',
      'hostname_wildcard',
      'hostname_platform_domain',
    ],
    handler: answerCreated(passing('slug', 'body.hostname')(addDomain)),
  },
  inspectDomain: {
    route: `GET ${base}/{hostname}`,
    summary: 'Inspect a domain',
    description: 'A domain with its history: who did what, when, with what outcome.',
    responses: ok('The domain and its history', 'DomainDetail'),
    handler: inDomain(inspectDomain),
  },
  verifyDomain: {
    route: `POST ${base}/{hostname}/verify`,
    summary: 'Verify',
    description:
      'Checks DNS now. Passing moves the domain to verified; failing leaves it unverified with the reason and the remedy.',
    responses: ok('The outcome and the domain after it', 'CheckResult'),
    errors: ['plan_required', 'deploy_required'],
    handler: inDomain(verifyDomain),
  },
  reverifyDomain: {
    route: `POST ${base}/{hostname}/reverify`,
    summary: 'Re-verify',
    description:
      'For a verified domain still without a certificate after 30 minutes: checks DNS again and starts a fresh certificate attempt.',
    responses: ok('The outcome and the domain after it', 'CheckResult'),
    errors: ['reverify_not_available'],
    handler: inDomain(reverifyDomain),
  },
  removeDomain: {
    route: `DELETE ${base}/{hostname}`,
    summary: 'Remove',
    description: 'Removes the domain: serving stops at once. Redirects from or to it go too.',
    responses: noContent('Removed'),
    handler: thenNoContent(inDomain(removeDomain)),
  },
  exportDomainConfig: {
    route: 'GET /api/v1/projects/{slug}/domain-config',
    summary: 'Export the domain configuration',
    description:
      'The YAML configuration (primary, redirects, names) that apply accepts unchanged, and the primary and redirects as values.',
    responses: ok('The configuration', 'DomainConfig'),
    handler: inProject(readDomainConfig),
  },
  applyDomainConfig: {
    route: 'PUT /api/v1/projects/{slug}/domain-config',
    summary: 'Apply a domain configuration',
    description:
      "Reconciles the project with a YAML configuration: adds missing domains, sets the primary and redirects; removes domains only with prune. An invalid file changes nothing; the message names each problem's line and column.",
    requestBody: jsonBody('The YAML text', 'DomainConfigText'),
    responses: ok('What changed', 'ApplyResult'),
    errors: ['invalid_domain_config', 'plan_required', 'deploy_required', 'domain_limit_reached'],
    async handler({ caller, params, body }, _reply, ctx) {
      const actor = actorOf(caller);
      const result = await applyDomainConfig(ctx, actor, params.slug, body.yaml, {
        prune: body.prune ?? false,
      });
      return {
        added: result.added,
        removed: result.removed,
        ...(await readDomainConfig(ctx, actor, params.slug)),
      };
    },
  },
});
