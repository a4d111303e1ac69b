import { Counter, Gauge, type Registry } from 'prom-client';
import type { Issuer } from './certificates/issuer.ts';
import type { PlatformContext } from './context.ts';

/** The certificate job's states (certificate_jobs.state), always exported, zero when none. */
const CERTIFICATE_STATES = ['pending', 'ordering', 'issued', 'failed'] as const;
/** Expiry windows, in days; 0 counts certificates already expired. */
const EXPIRY_WINDOWS = [0, 7, 14, 30] as const;
const DAY_MS = 86_400_000;

export type BackgroundJob = 'certificates' | 'domain_checks';

/**
 * The control plane's metrics. Gauges about stored state (certificates, queues) are read from the
 * database when Prometheus scrapes, never on the request path, and are the same on every node of
 * one database. Counters (orders, failed passes) are this node's own.
 */
export class PlatformMetrics {
  readonly #passFailures: Counter<'job'>;
  readonly #orders: Counter<'outcome'>;

  constructor(registry: Registry, ctx: Pick<PlatformContext, 'db' | 'clock'>) {
    const { db, clock } = ctx;
    new Gauge({
      name: 'kennel_certificates',
      help: "Certificates of verified domains by the certificate job's state",
      labelNames: ['state'],
      registers: [registry],
      async collect() {
        const rows = await db
          .selectFrom('certificate_jobs')
          .select(['state', db.fn.countAll<number>().as('n')])
          .groupBy('state')
          .execute();
        const counts = new Map(rows.map((r) => [r.state, Number(r.n)]));
        for (const state of CERTIFICATE_STATES) this.set({ state }, counts.get(state) ?? 0);
      },
    });
    new Gauge({
      name: 'kennel_certificates_expiring',
      help: 'Stored certificates expiring within the given days (0: already expired)',
      labelNames: ['within_days'],
      registers: [registry],
      async collect() {
        const days = await daysToExpiry(ctx);
        for (const within of EXPIRY_WINDOWS) {
          this.set({ within_days: String(within) }, days.filter((d) => d <= within).length);
        }
      },
    });
    new Gauge({
      name: 'kennel_certificate_min_days_to_expiry',
      help: 'Days until the stored certificate closest to expiry expires (negative once expired, +Inf with none)',
      registers: [registry],
      async collect() {
        const days = await daysToExpiry(ctx);
        const min = days.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
        this.set(Number.isFinite(min) ? Math.round(min * 100) / 100 : min);
      },
    });
    new Gauge({
      name: 'kennel_job_queue_depth',
      help: 'Background work waiting: certificate jobs due or leased by a node, domain checks due',
      labelNames: ['job', 'state'],
      registers: [registry],
      async collect() {
        const now = clock.now().toISOString();
        const [due, leased, checks] = await Promise.all([
          db
            .selectFrom('certificate_jobs')
            .select(db.fn.countAll<number>().as('n'))
            .where('next_attempt_at', '<=', now)
            .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
            .executeTakeFirstOrThrow(),
          db
            .selectFrom('certificate_jobs')
            .select(db.fn.countAll<number>().as('n'))
            .where('lease_until', '>=', now)
            .executeTakeFirstOrThrow(),
          db
            .selectFrom('domains')
            .select(db.fn.countAll<number>().as('n'))
            .where('state', '<>', 'removed')
            .where('next_check_at', '<=', now)
            .executeTakeFirstOrThrow(),
        ]);
        this.set({ job: 'certificates', state: 'due' }, Number(due.n));
        this.set({ job: 'certificates', state: 'leased' }, Number(leased.n));
        this.set({ job: 'domain_checks', state: 'due' }, Number(checks.n));
      },
    });
    this.#passFailures = new Counter({
      name: 'kennel_job_pass_failures_total',
      help: "Passes of a background job that failed as a whole (the error is in this node's log)",
      labelNames: ['job'],
      registers: [registry],
    });
    this.#orders = new Counter({
      name: 'kennel_certificate_orders_total',
      help: "Certificate orders placed by this node's certificate job, by outcome",
      labelNames: ['outcome'],
      registers: [registry],
    });
    for (const job of ['certificates', 'domain_checks'] as const) this.#passFailures.inc({ job }, 0);
    for (const outcome of ['issued', 'failed'] as const) this.#orders.inc({ outcome }, 0);
  }

  passFailed(job: BackgroundJob): void {
    this.#passFailures.inc({ job });
  }

  /** The issuer, counting each order's outcome (the job itself records the failure's reason). */
  countOrders(issuer: Issuer): Issuer {
    const orders = this.#orders;
    return {
      name: issuer.name,
      // The pre-check (CAA) and the renewal window are the issuer's, unchanged.
      ...(issuer.preCheck && { preCheck: issuer.preCheck.bind(issuer) }),
      ...(issuer.renewalWindow && { renewalWindow: issuer.renewalWindow.bind(issuer) }),
      async issue(request, challenges) {
        try {
          const issued = await issuer.issue(request, challenges);
          orders.inc({ outcome: 'issued' });
          return issued;
        } catch (error) {
          orders.inc({ outcome: 'failed' });
          throw error;
        }
      },
    };
  }
}

async function daysToExpiry(ctx: Pick<PlatformContext, 'db' | 'clock'>): Promise<number[]> {
  const now = ctx.clock.now().getTime();
  const rows = await ctx.db.selectFrom('certificates').select('not_after').execute();
  return rows.map((r) => (Date.parse(r.not_after) - now) / DAY_MS);
}
