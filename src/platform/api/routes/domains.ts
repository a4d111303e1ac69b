import { ref } from '../../../lib/http-api/index.ts';
import { addDomain } from '../../domains/add-domain.ts';
import { applyDomainConfig, readDomainConfig } from '../../domains/apply-domain-config.ts';
import { inspectDomain, listDomains } from '../../domains/read-domains.ts';
import { removeDomain } from '../../domains/remove-domain.ts';
import { reverifyDomain, verifyDomain } from '../../domains/verify-domain.ts';
import { actorOf } from '../auth.ts';
import { managementOperation } from '../operation.ts';
import { answerCreated, created, inProject, noContent, ok, thenNoContent } from './answers.ts';
import { slugParam } from './parameters.ts';

const TAG = ['Domains'];
const hostnameParam = {
  name: 'hostname',
  in: 'path' as const,
  description: 'The custom domain (Unicode or punycode)',
  schema: { type: 'string', minLength: 1, maxLength: 300 },
};
const base = '/api/v1/projects/{slug}/domains';
const domainErrors = ['unauthenticated', 'project_not_found', 'domain_not_found'];

export const domainRoutes = [
  managementOperation({
    operationId: 'listDomains',
    method: 'GET',
    path: base,
    tags: TAG,
    summary: 'List domains',
    description: "The project's custom domains with their state and the DNS records to create.",
    parameters: [slugParam],
    responses: ok('Domains', ['Domain']),
    errors: ['unauthenticated', 'project_not_found'],
    handler: inProject(listDomains),
  }),
  managementOperation({
    operationId: 'addDomain',
    method: 'POST',
    path: base,
    tags: TAG,
    summary: 'Add a domain',
    description:
      'Adds a custom domain (Pro plan or above, after a successful deploy). The answer carries the DNS records to create and what DNS shows now (a conflicting record, a CAA record that would block the CA).',
    parameters: [slugParam],
    requestBody: { description: 'The hostname', schema: ref('NewDomain') },
    responses: created('The domain, unverified', 'AddedDomain'),
    errors: [
      'unauthenticated',
      'csrf_failed',
      'project_not_found',
      'plan_required',
      'deploy_required',
      'domain_limit_reached',
      'domain_already_added',
      'invalid_hostname',
      'hostname_ip_address',
      'hostname_wildcard',
      'hostname_platform_domain',
    ],
    handler: answerCreated(({ caller, params, body }, ctx) =>
      addDomain(ctx, actorOf(caller), params.slug, body.hostname),
    ),
  }),
  managementOperation({
    operationId: 'inspectDomain',
    method: 'GET',
    path: `${base}/{hostname}`,
    tags: TAG,
    summary: 'Inspect a domain',
    description: 'A domain with its history: who did what, when, with what outcome.',
    parameters: [slugParam, hostnameParam],
    responses: ok('The domain and its history', 'DomainDetail'),
    errors: domainErrors,
    handler: ({ caller, params }, _reply, ctx) =>
      inspectDomain(ctx, actorOf(caller), params.slug, params.hostname),
  }),
  managementOperation({
    operationId: 'verifyDomain',
    method: 'POST',
    path: `${base}/{hostname}/verify`,
    tags: TAG,
    summary: 'Verify',
    description:
      'Checks DNS now. Passing moves the domain to verified; failing leaves it unverified with the reason and the remedy.',
    parameters: [slugParam, hostnameParam],
    responses: ok('The outcome and the domain after it', 'CheckResult'),
    errors: [...domainErrors, 'csrf_failed', 'plan_required', 'deploy_required'],
    handler: ({ caller, params }, _reply, ctx) =>
      verifyDomain(ctx, actorOf(caller), params.slug, params.hostname),
  }),
  managementOperation({
    operationId: 'reverifyDomain',
    method: 'POST',
    path: `${base}/{hostname}/reverify`,
    tags: TAG,
    summary: 'Re-verify',
    description:
      'For a verified domain still without a certificate after 30 minutes: checks DNS again and starts a fresh certificate attempt.',
    parameters: [slugParam, hostnameParam],
    responses: ok('The outcome and the domain after it', 'CheckResult'),
    errors: [...domainErrors, 'csrf_failed', 'reverify_not_available'],
    handler: ({ caller, params }, _reply, ctx) =>
      reverifyDomain(ctx, actorOf(caller), params.slug, params.hostname),
  }),
  managementOperation({
    operationId: 'removeDomain',
    method: 'DELETE',
    path: `${base}/{hostname}`,
    tags: TAG,
    summary: 'Remove',
    description: 'Removes the domain: serving stops at once. Redirects from or to it go too.',
    parameters: [slugParam, hostnameParam],
    responses: noContent('Removed'),
    errors: [...domainErrors, 'csrf_failed'],
    handler: thenNoContent(({ caller, params }, ctx) =>
      removeDomain(ctx, actorOf(caller), params.slug, params.hostname),
    ),
  }),
  managementOperation({
    operationId: 'exportDomainConfig',
    method: 'GET',
    path: '/api/v1/projects/{slug}/domain-config',
    tags: TAG,
    summary: 'Export the domain configuration',
    description:
      'The YAML configuration (primary, redirects, names) that apply accepts unchanged, and the primary and redirects as values.',
    parameters: [slugParam],
    responses: ok('The configuration', 'DomainConfig'),
    errors: ['unauthenticated', 'project_not_found'],
    handler: inProject(readDomainConfig),
  }),
  managementOperation({
    operationId: 'applyDomainConfig',
    method: 'PUT',
    path: '/api/v1/projects/{slug}/domain-config',
    tags: TAG,
    summary: 'Apply a domain configuration',
    description:
      "Reconciles the project with a YAML configuration: adds missing domains, sets the primary and redirects; removes domains only with prune. An invalid file changes nothing; the message names each problem's line and column.",
    parameters: [slugParam],
    requestBody: { description: 'The YAML text', schema: ref('DomainConfigText') },
    responses: ok('What changed', 'ApplyResult'),
    errors: [
      'unauthenticated',
      'csrf_failed',
      'project_not_found',
      'invalid_domain_config',
      'plan_required',
      'deploy_required',
      'domain_limit_reached',
    ],
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
  }),
];
