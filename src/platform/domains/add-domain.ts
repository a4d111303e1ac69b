import { randomBytes } from 'node:crypto';
import type { Transaction } from 'kysely';
import { type HostnameWarning, type ParsedHostname, parseHostname } from '../../lib/hostname.ts';
import { isUniqueViolation, transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { checkApex, checkCaa, checkSubdomain, type DnsCheckOutcome } from '../dns/dns-check.ts';
import { platformErrors } from '../errors.ts';
import { PLANS } from '../plans.ts';
import { type Project, projectFor } from '../projects/projects.ts';
import { type DomainRow, type DomainView, recordEvent, servedStates, toView } from './domain-store.ts';

/** What DNS shows right now, before anyone clicks Verify. */
export interface DnsPreview {
  check: Pick<DnsCheckOutcome, 'ok' | 'reason' | 'message' | 'remedy' | 'found'>;
  caa: Pick<DnsCheckOutcome, 'ok' | 'reason' | 'message' | 'remedy' | 'found'>;
}

export interface AddedDomain {
  domain: DomainView;
  warnings: HostnameWarning[];
  dns: DnsPreview;
}

const REFUSALS = {
  invalid_hostname: 'invalid_hostname',
  ip_address: 'hostname_ip_address',
  wildcard: 'hostname_wildcard',
  platform_domain: 'hostname_platform_domain',
} as const;

/**
 * Checks the prerequisites of seed 001: a paid plan and a successful deploy. The plan message
 * depends on who asks: a platform admin can change the plan, anyone else asks one.
 */
export function requireDomainPrerequisites(project: Project, actor: Actor): void {
  const plan = PLANS[project.plan];
  if (!plan.customDomains) {
    const upgrade = actor.isAdmin
      ? `As a platform admin, you can move team ${project.teamId} to the Pro plan yourself.`
      : `Ask a platform admin to move team ${project.teamId} to the Pro plan.`;
    throw platformErrors.error(
      'plan_required',
      `Custom domains need the Pro plan or above; project ${project.slug}'s team is on ${plan.title}. ${upgrade}`,
    );
  }
  if (project.activeDeployId === null) {
    throw platformErrors.error(
      'deploy_required',
      `Project ${project.slug} has no successful deploy yet. Deploy its OpenAPI document first, then add the domain.`,
    );
  }
}

export function checkDns(
  ctx: PlatformContext,
  project: Project,
  row: Pick<DomainRow, 'hostname' | 'is_apex' | 'ownership_token'>,
) {
  return row.is_apex
    ? checkApex(
        ctx.resolver,
        row.hostname,
        { v4: ctx.config.platformAddressesV4, v6: ctx.config.platformAddressesV6 },
        row.ownership_token,
      )
    : checkSubdomain(ctx.resolver, row.hostname, project.defaultHost);
}

const brief = (o: DnsCheckOutcome) => ({
  ok: o.ok,
  reason: o.reason,
  message: o.message,
  remedy: o.remedy,
  found: o.found,
});

/**
 * Adds a custom domain (seed 001, "Add domain"): the hostname is normalised and refused with a
 * reason when it cannot be a custom domain; the answer carries the records to create and what
 * DNS shows now. The domain starts `unverified`, and background checks begin.
 */
export async function addDomain(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  input: string,
): Promise<AddedDomain> {
  const project = await projectFor(ctx, actor, slug);
  requireDomainPrerequisites(project, actor);
  const parsed = parseHostname(input, { platformDomains: [ctx.config.platformDomain] });
  if (!parsed.ok) throw platformErrors.error(REFUSALS[parsed.reason], parsed.message);

  let row: DomainRow;
  try {
    row = await transact(ctx.db, (trx) => insertDomain(trx, ctx, actor, project, parsed));
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw platformErrors.error(
        'domain_already_added',
        `${parsed.hostname} is already a domain of ${slug}.`,
      );
    }
    throw error;
  }

  // The preview: what DNS shows now. It does not change the state; Verify does.
  const [check, caa] = await Promise.all([
    checkDns(ctx, project, row),
    checkCaa(ctx.resolver, row.hostname, ctx.config.caaIdentifier),
  ]);
  const servedElsewhere = await ctx.db
    .selectFrom('domains')
    .select('id')
    .where('hostname', '=', row.hostname)
    .where('project_id', '<>', project.id)
    .where('state', 'in', servedStates)
    .executeTakeFirst();
  return {
    domain: toView(ctx, project, row, servedElsewhere !== undefined),
    warnings: [...parsed.warnings],
    dns: { check: brief(check), caa: brief(caa) },
  };
}

/**
 * Inserts an `unverified` domain inside the caller's transaction, after the per-project checks
 * (not already added, within the plan's limit); background checks start at once.
 */
export async function insertDomain(
  trx: Transaction<PlatformTables>,
  ctx: PlatformContext,
  actor: Actor,
  project: Project,
  parsed: Pick<ParsedHostname, 'hostname' | 'kind' | 'warnings'>,
): Promise<DomainRow> {
  const now = ctx.clock.now();
  const existing = await trx
    .selectFrom('domains')
    .select(['hostname'])
    .where('project_id', '=', project.id)
    .where('state', '<>', 'removed')
    .execute();
  if (existing.some((d) => d.hostname === parsed.hostname)) {
    throw platformErrors.error(
      'domain_already_added',
      `${parsed.hostname} is already a domain of ${project.slug}: open it to see its state and records.`,
    );
  }
  const plan = PLANS[project.plan];
  if (existing.length >= plan.maxDomainsPerProject) {
    throw platformErrors.error(
      'domain_limit_reached',
      `Project ${project.slug} has ${existing.length} domains, the most the ${plan.title} plan allows (${plan.maxDomainsPerProject}). Remove one, or ask an admin for a larger plan.`,
    );
  }
  const inserted = await trx
    .insertInto('domains')
    .values({
      project_id: project.id,
      hostname: parsed.hostname,
      state: 'unverified',
      is_apex: parsed.kind === 'apex' ? 1 : 0,
      ownership_token: randomBytes(18).toString('base64url'),
      reason: 'not_found_yet',
      reason_detail: null,
      verified_at: null,
      last_checked_at: null,
      next_check_at: now.toISOString(),
      check_attempts: 0,
      checks_until: new Date(now.getTime() + ctx.config.propagationWindowMs).toISOString(),
      created_at: now.toISOString(),
      removed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvent(trx, now, inserted.id, actor, 'add', 'unverified', {
    hostname: parsed.hostname,
    warnings: parsed.warnings.map((w) => w.code),
  });
  return inserted as DomainRow;
}
