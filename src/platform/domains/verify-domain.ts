import { backoffDelay } from '../../lib/backoff.ts';
import { normalizeHostname, ownershipRecordName } from '../../lib/hostname.ts';
import { isUniqueViolation, transact } from '../../storage/index.ts';
import {
  certificateNeedsAttempt,
  certificateStatuses,
  dropCertificate,
  requestCertificate,
} from '../certificates/certificate-job.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { DnsCheckOutcome } from '../dns/dns-check.ts';
import { platformErrors } from '../errors.ts';
import { type Project, projectFor } from '../projects/projects.ts';
import { domainSubject, emitEvent, type PlatformEventType } from '../webhooks/webhook-events.ts';
import { checkDns, requireDomainPrerequisites } from './add-domain.ts';
import {
  type DomainRow,
  type DomainView,
  liveDomain,
  recordEvent,
  servedStates,
  toView,
} from './domain-store.ts';
import { type DomainEvent, type DomainState, transition } from './lifecycle.ts';
import { domainView, projectDomain } from './read-domains.ts';
import { ownershipValue } from './records.ts';

/** Why a check ran: a person clicked Verify / Re-verify, or the background checker. */
export type CheckMode = 'verify' | 'reverify' | 'background';

/** Background checks of unverified domains: 1 min, 2, 4… capped at 1 h, within the window. */
export const UNVERIFIED_BACKOFF = { baseMs: 60_000, maxMs: 3_600_000 };

type Outcome = Pick<DnsCheckOutcome, 'ok' | 'reason' | 'message' | 'remedy' | 'found'>;

export interface CheckResult {
  domain: DomainView;
  outcome: Outcome;
}

async function provesOwnership(ctx: PlatformContext, row: DomainRow): Promise<boolean> {
  try {
    const records = await ctx.resolver.resolveTxt(ownershipRecordName(row.hostname));
    return records.some((parts) => parts.join('').includes(ownershipValue(row.ownership_token)));
  } catch {
    return false;
  }
}

/** The lifecycle event a check's outcome amounts to, given the domain's state. */
function eventFor(state: DomainState, ok: boolean, mode: CheckMode, taken: boolean): DomainEvent {
  if (state === 'unverified') return ok ? (taken ? 'check_passed_taken' : 'check_passed') : 'check_failed';
  if (!ok) return 'recheck_failed';
  return mode === 'background' ? 'recheck_passed' : 'check_passed';
}

/**
 * Runs one DNS check of a domain and moves it through the lifecycle table. A passing check on a
 * hostname another project serves needs the TXT ownership proof; with it, the hostname moves
 * here and the other project's domain is `taken_over`.
 */
export async function checkDomain(
  ctx: PlatformContext,
  actor: Actor | 'system',
  project: Project,
  row: DomainRow,
  mode: CheckMode,
): Promise<{ row: DomainRow; outcome: Outcome }> {
  const outcome = await checkDns(ctx, project, row);
  const now = ctx.clock.now();
  const rival = await ctx.db
    .selectFrom('domains')
    .selectAll()
    .where('hostname', '=', row.hostname)
    .where('project_id', '<>', project.id)
    .where('state', 'in', servedStates)
    .executeTakeFirst();
  const proven = outcome.ok && rival !== undefined && (row.is_apex ? true : await provesOwnership(ctx, row));
  let event = eventFor(row.state, outcome.ok, mode, rival !== undefined && !proven);
  let emitted = false;

  const apply = async (chosen: DomainEvent) =>
    transact(ctx.db, async (trx) => {
      emitted = false;
      // The row lock (PostgreSQL; SQLite has one writer) decides which of two checks running at
      // once transitions the domain: the one that finds the row as it was when both started. The
      // other's DNS answer is no newer, so it changes nothing and answers with the row as it is.
      let locked = trx.selectFrom('domains').selectAll().where('id', '=', row.id);
      if (ctx.dialect === 'postgres') locked = locked.forUpdate();
      const current = (await locked.executeTakeFirstOrThrow()) as DomainRow;
      if (current.state === 'removed') return current;
      if (current.state !== row.state || current.last_checked_at !== row.last_checked_at) return current;
      const step = transition(current.state, chosen);
      let rivalNow = rival
        ? trx
            .selectFrom('domains')
            .select(['id', 'state'])
            .where('id', '=', rival.id)
            .where('state', 'in', servedStates)
        : undefined;
      if (rivalNow && ctx.dialect === 'postgres') rivalNow = rivalNow.forUpdate();
      const rivalServes = rivalNow ? await rivalNow.executeTakeFirst() : undefined;
      if (step.to === 'verified' && rival && rivalServes && proven) {
        const rivalStep = transition(rivalServes.state, 'taken_over');
        await trx
          .updateTable('domains')
          .set({
            state: rivalStep.to,
            reason: 'taken_over',
            reason_detail: null,
            verified_at: null,
            next_check_at: null,
          })
          .where('id', '=', rival.id)
          .execute();
        await recordEvent(trx, now, rival.id, actor, 'taken_over', rivalStep.to, { by: project.slug });
        // The certificate it ordered goes with it: a hostname presents only its serving
        // domain's certificate, and this domain orders its own below.
        await dropCertificate(trx, rival.id);
      }
      const reason = chosen === 'check_passed_taken' ? 'hostname_taken' : outcome.ok ? null : outcome.reason;
      const manual = mode !== 'background';
      let attempts = current.check_attempts;
      let checksUntil = current.checks_until;
      let next: string | null;
      if (step.to === 'unverified') {
        attempts = manual ? 0 : attempts + 1;
        if (manual) checksUntil = new Date(now.getTime() + ctx.config.propagationWindowMs).toISOString();
        const due = now.getTime() + backoffDelay(Math.max(1, attempts), UNVERIFIED_BACKOFF);
        next = checksUntil !== null && due <= Date.parse(checksUntil) ? new Date(due).toISOString() : null;
      } else {
        attempts = 0;
        next = new Date(now.getTime() + ctx.config.recheckIntervalMs).toISOString();
      }
      const updated = await trx
        .updateTable('domains')
        .set({
          state: step.to,
          reason,
          reason_detail: JSON.stringify({ message: outcome.message, found: outcome.found }),
          verified_at:
            step.to === 'verified'
              ? current.state === 'verified'
                ? current.verified_at
                : now.toISOString()
              : current.verified_at,
          last_checked_at: now.toISOString(),
          check_attempts: attempts,
          checks_until: checksUntil,
          next_check_at: next,
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      // The team's webhook hears of the domain becoming served or no longer pointing here, in
      // this transaction: the event exists exactly when the change and its history entry do.
      const type: PlatformEventType | null =
        step.to === 'verified' && current.state !== 'verified'
          ? 'domain.verified'
          : step.to === 'misconfigured' && current.state === 'verified'
            ? 'domain.not_pointing'
            : null;
      const webhook = type
        ? await emitEvent(trx, now, {
            teamId: project.teamId,
            type,
            subject: domainSubject(row.id),
            data: {
              hostname: row.hostname,
              project: project.slug,
              state: step.to,
              previousState: current.state,
              reason,
              message: outcome.message,
            },
          })
        : null;
      emitted = webhook !== null;
      // A newly verified domain gets its certificate ordered; Re-verify starts a fresh attempt,
      // and so does Verify when the last attempt failed or its node died (CAA fixed: click Verify).
      const order =
        step.to === 'verified' &&
        (current.state !== 'verified' ||
          mode === 'reverify' ||
          (mode === 'verify' && (await certificateNeedsAttempt(trx, row.id, now))));
      await recordEvent(trx, now, row.id, actor, mode, step.to, {
        reason,
        message: outcome.message,
        ...(order && current.state === 'verified' ? { certificate: 'fresh attempt' } : {}),
        ...(webhook ? { webhook } : {}),
      });
      if (order) await requestCertificate(trx, row.id, row.hostname, now);
      if (step.to === 'unverified' && next === null && current.next_check_at !== null) {
        await recordEvent(trx, now, row.id, 'system', 'checks_stopped', step.to, { reason });
      }
      return updated as DomainRow;
    });

  let updated: DomainRow;
  try {
    updated = await apply(event);
  } catch (error) {
    // Two projects verifying one hostname at once: the index lets one of them serve it.
    if (!isUniqueViolation(error) || event !== 'check_passed') throw error;
    event = 'check_passed_taken';
    updated = await apply(event);
  }
  if (emitted) ctx.webhooks?.wake();
  if (updated.state !== row.state || rival) ctx.changes.publish({ kind: 'domains', projectId: project.id });
  if (rival && proven) ctx.changes.publish({ kind: 'domains', projectId: rival.project_id });
  const { ok, reason, message, remedy, found } = outcome;
  return { row: updated, outcome: { ok, reason, message, remedy, found } };
}

/** A check as the API shows it: the outcome and the domain after it, certificate included. */
async function checkForPerson(
  ctx: PlatformContext,
  actor: Actor,
  project: Project,
  row: DomainRow,
  mode: CheckMode,
): Promise<CheckResult> {
  const checked = await checkDomain(ctx, actor, project, row, mode);
  return { domain: await domainView(ctx, project, checked.row), outcome: checked.outcome };
}

/** Verify (seed 001): checks DNS now and moves the domain by the outcome. */
export async function verifyDomain(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  hostname: string,
): Promise<CheckResult> {
  const project = await projectFor(ctx, actor, slug);
  requireDomainPrerequisites(project, actor);
  const row = await liveDomain(ctx.db, project, normalizeHostname(hostname));
  return checkForPerson(ctx, actor, project, row, 'verify');
}

/** Why Re-verify is refused before its time, with what happens meanwhile and what to do now. */
function reverifyTooEarly(
  ctx: PlatformContext,
  hostname: string,
  view: DomainView,
  verifyRetries: boolean,
): string {
  const minutes = Math.round(ctx.config.reverifyAfterMs / 60_000);
  const from = `Re-verify is offered from ${view.reverifyAvailableAt} (${minutes} minutes after verification).`;
  const certificate = view.certificate;
  if (certificate?.state === 'failed') {
    const why =
      certificate.reason === 'caa_forbids'
        ? 'a CAA record forbids the certificate authority'
        : certificate.reason;
    const next = !certificate.nextAttemptAt
      ? 'The platform does not retry on its own: fix the cause, then verify again to retry now.'
      : verifyRetries
        ? `The platform retries at ${certificate.nextAttemptAt}; to retry now, fix the cause and verify again.`
        : `The certificate authority asked to wait: the platform retries at ${certificate.nextAttemptAt}.`;
    return `The last certificate attempt for ${hostname} failed (${why}). ${next} ${from}`;
  }
  if (certificate?.state === 'ordering') {
    return `The certificate for ${hostname} is being ordered now. ${from}`;
  }
  return `The certificate for ${hostname} is ordered${
    certificate?.nextAttemptAt ? ` at ${certificate.nextAttemptAt}` : ''
  } and usually issued within a couple of minutes. ${from}`;
}

/**
 * Re-verify (seed 001): for a verified domain with no certificate after the waiting time (30
 * minutes by default); checks DNS again and starts a fresh certificate attempt.
 */
export async function reverifyDomain(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  hostname: string,
): Promise<CheckResult> {
  const { project, row } = await projectDomain(ctx, actor, slug, hostname);
  const certificate = (await certificateStatuses(ctx.db, [row.id])).get(row.id) ?? null;
  const view = toView(ctx, project, row, false, certificate);
  if (row.state !== 'verified' || view.reverifyAvailableAt === null) {
    throw platformErrors.error(
      'reverify_not_available',
      certificate?.notAfter
        ? `${row.hostname} already has a certificate, valid until ${certificate.notAfter}; renewal is automatic.`
        : `${row.hostname} is ${row.state}: Re-verify is for verified domains still waiting for a certificate. Use Verify instead: it checks DNS now.`,
    );
  }
  if (ctx.clock.now().toISOString() < view.reverifyAvailableAt) {
    const verifyRetries = await certificateNeedsAttempt(ctx.db, row.id, ctx.clock.now());
    throw platformErrors.error(
      'reverify_not_available',
      reverifyTooEarly(ctx, row.hostname, view, verifyRetries),
    );
  }
  return checkForPerson(ctx, actor, project, row, 'reverify');
}
