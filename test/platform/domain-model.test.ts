import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createTeam, setPlan } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { obtainDueCertificates } from '../../src/platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import type { IssuedCertificate, Issuer } from '../../src/platform/certificates/issuer.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { SERVED_STATES } from '../../src/platform/domains/lifecycle.ts';
import { ownershipValue } from '../../src/platform/domains/records.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { setWebhookEndpoint } from '../../src/platform/webhooks/webhook-endpoints.ts';
import { testDialects } from '../support/databases.ts';
import { type DnsRecord, startDns, type TestDns } from '../support/dns.ts';
import { startPlatformContext, TEST_SEALING_KEY, type TestPlatform } from '../support/platform.ts';

/**
 * A model-based test of the domain lifecycle across three teams (issue 17): random sequences of
 * add, verify (also twice at once), remove, remove while an order is in flight, DNS pointing at a
 * team with or without its TXT ownership proof, and certificate job passes, against real DNS (NSD)
 * and the internal CA. After every step the invariants below must hold; fast-check shrinks a
 * failing sequence to a minimal one. CI runs a fixed seed and a small budget; MODEL_RUNS and
 * MODEL_SEED run it longer (docs/decisions.md).
 */

const TEAMS = ['alpha', 'beta', 'gamma'] as const;
type Team = (typeof TEAMS)[number];
/** Two names: most steps meet on the same one, some on the other. */
const NAMES = [0, 1] as const;

type Step =
  | { kind: 'add' | 'verify' | 'verifyTwice' | 'remove' | 'removeDuringOrder'; team: Team; name: 0 | 1 }
  | { kind: 'point'; team: Team; name: 0 | 1; proof: boolean }
  | { kind: 'job' };

const team = fc.constantFrom(...TEAMS);
const name = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0 as const) },
  { weight: 1, arbitrary: fc.constant(1 as const) },
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('add'), team, name }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('point'), team, name, proof: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom('verify', 'verifyTwice'), team, name }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('remove', 'removeDuringOrder'), team, name }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('job') }) },
) as fc.Arbitrary<Step>;

const TAKEOVER: Step[] = [
  { kind: 'add', team: 'alpha', name: 0 },
  { kind: 'point', team: 'alpha', name: 0, proof: false },
  { kind: 'verifyTwice', team: 'alpha', name: 0 },
  { kind: 'job' },
  { kind: 'add', team: 'beta', name: 0 },
  { kind: 'verify', team: 'beta', name: 0 },
  { kind: 'remove', team: 'beta', name: 0 },
  { kind: 'job' },
  { kind: 'add', team: 'gamma', name: 0 },
  { kind: 'point', team: 'gamma', name: 0, proof: true },
  { kind: 'verify', team: 'gamma', name: 0 },
  { kind: 'removeDuringOrder', team: 'gamma', name: 0 },
  { kind: 'job' },
];

const RUNS = Number(process.env.MODEL_RUNS ?? 15);
const SEED = Number(process.env.MODEL_SEED ?? 20261125);

/** The internal CA with a gate on one hostname, to remove a domain while its order is in flight. */
class GatedIssuer implements Issuer {
  readonly name = 'internal';
  readonly #inner: Issuer;
  #held: string | null = null;
  #open: () => void = () => {};
  #gate: Promise<void> = Promise.resolve();
  #started: () => void = () => {};
  started: Promise<void> = Promise.resolve();
  constructor(inner: Issuer) {
    this.#inner = inner;
  }
  hold(hostname: string): void {
    this.#held = hostname;
    this.#gate = new Promise((resolve) => {
      this.#open = resolve;
    });
    this.started = new Promise((resolve) => {
      this.#started = resolve;
    });
  }
  release(): void {
    this.#held = null;
    this.#open();
    this.#started();
  }
  async issue(hostname: string): Promise<IssuedCertificate> {
    if (hostname === this.#held) {
      this.#started();
      await this.#gate;
    }
    return this.#inner.issue(hostname, databaseChallenges as never);
  }
}

/** Errors a step may meet by design (a refusal); anything else fails the run. */
const EXPECTED = new Set(['domain_already_added', 'domain_not_found', 'domain_limit_reached']);
const tolerate = async (work: () => Promise<unknown>) => {
  try {
    await work();
  } catch (error) {
    if (!EXPECTED.has((error as { code?: string }).code ?? '')) throw error;
  }
};

for (const dialect of testDialects()) {
  describe(`the domain lifecycle as a model: three teams, random steps (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let issuer: GatedIssuer;
    let store: CertificateStore;
    const actors = new Map<Team, Actor>();
    let run = 0;

    before(async () => {
      dns = await startDns({ zones: ['example.test', 'platform.test'] });
      await dns.setRecords(
        'platform.test',
        TEAMS.map((t) => ({ name: t, type: 'A', value: '127.0.0.1' })),
      );
      p = await startPlatformContext(dialect, {
        DNS_SERVERS: dns.servers.join(','),
        WEBHOOK_TARGETS: 'private',
      });
      store = new CertificateStore(p.ctx.db, [TEST_SEALING_KEY]);
      issuer = new GatedIssuer(
        new InternalIssuer(await store.internalCa(p.clock.now()), { now: () => p.clock.now() }),
      );
      const admin = await createUser(p.ctx, {
        email: 'admin@x.test',
        password: 'admin password 1',
        isAdmin: true,
      });
      for (const t of TEAMS) {
        const owner = await createUser(p.ctx, { email: `${t}@x.test`, password: `${t} password 1` });
        const created = await createTeam(p.ctx, owner, t);
        await setPlan(p.ctx, admin, created.id, 'pro');
        await createProject(p.ctx, owner, {
          teamId: created.id,
          slug: t,
          name: t,
          originUrl: 'http://127.0.0.1:1',
        });
        await deployProject(p.ctx, owner, t, {
          document: JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} }),
        });
        await setWebhookEndpoint(p.ctx, owner, created.id, 'http://127.0.0.1:1/hook');
        actors.set(t, owner);
      }
    });
    after(async () => {
      issuer?.release();
      await p?.close();
      await dns?.stop();
    });

    /** Every invariant, over this run's hostnames. */
    async function check(hostnames: string[], afterJob: boolean, trace: string): Promise<void> {
      const { db } = p.ctx;
      const domains = await db
        .selectFrom('domains')
        .select(['id', 'hostname', 'state'])
        .where('hostname', 'in', hostnames)
        .execute();
      const served = domains.filter((d) => (SERVED_STATES as readonly string[]).includes(d.state));
      for (const h of hostnames) {
        assert.ok(served.filter((d) => d.hostname === h).length <= 1, `${h} served twice\n${trace}`);
      }
      // Every certificate presented for a name belongs to the live domain serving it.
      const certificates = await db
        .selectFrom('certificates')
        .select(['hostname', 'domain_id'])
        .where('hostname', 'in', hostnames)
        .execute();
      for (const c of certificates) {
        const owner = served.find((d) => Number(d.id) === Number(c.domain_id));
        assert.ok(
          owner && owner.hostname === c.hostname,
          `${c.hostname}: certificate of a domain not serving it\n${trace}`,
        );
      }
      const ids = domains.map((d) => d.id);
      if (ids.length === 0) return;
      const history = await db
        .selectFrom('domain_events')
        .select(['domain_id', 'action', 'outcome', 'detail'])
        .where('domain_id', 'in', ids)
        .orderBy('id')
        .execute();
      const events = await db
        .selectFrom('webhook_messages')
        .select(['id', 'subject', 'type'])
        .where(
          'subject',
          'in',
          ids.map((id) => `domain:${id}`),
        )
        .execute();
      for (const d of domains) {
        const own = history.filter((e) => Number(e.domain_id) === Number(d.id));
        // Status and history agree: the last entry names the state the domain is in.
        assert.equal(own.at(-1)?.outcome, d.state, `${d.hostname} #${d.id} history ends elsewhere\n${trace}`);
        // History and webhooks agree: one domain.verified event per transition into verified.
        let transitions = 0;
        own.forEach((e, i) => {
          if (e.outcome === 'verified' && (i === 0 || own[i - 1]?.outcome !== 'verified')) transitions++;
        });
        const verifiedEvents = events.filter(
          (m) => m.subject === `domain:${d.id}` && m.type === 'domain.verified',
        );
        assert.equal(
          verifiedEvents.length,
          transitions,
          `${d.hostname} #${d.id} events vs history\n${trace}`,
        );
        const referenced = own.filter((e) => e.detail?.includes('"webhook"')).length;
        const all = events.filter((m) => m.subject === `domain:${d.id}`).length;
        assert.equal(referenced, all, `${d.hostname} #${d.id}: every event has its history entry\n${trace}`);
      }
      if (afterJob) {
        // With healthy nodes and the internal CA, no served domain stays without its certificate.
        for (const d of served) {
          assert.ok(
            certificates.some((c) => Number(c.domain_id) === Number(d.id)),
            `${d.hostname} #${d.id} served without its certificate after a job pass\n${trace}`,
          );
        }
      }
    }

    it('keeps every invariant after every step', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30, size: 'max' }), async (steps) => {
          run++;
          const hostnames = NAMES.map((n) => `r${run}n${n}.example.test`);
          const records = new Map<string, DnsRecord[]>(); // per hostname
          const publish = () => dns.setRecords('example.test', [...records.values()].flat());
          const trace: string[] = [];
          try {
            for (const s of steps) {
              trace.push(JSON.stringify(s));
              const text = trace.join('\n');
              if (s.kind === 'job') {
                await obtainDueCertificates(p.ctx, {
                  issuer,
                  store,
                  challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
                  nodeId: 'node-a',
                  leaseMs: 15_000,
                });
                await check(hostnames, true, text);
                continue;
              }
              const hostname = hostnames[s.name] as string;
              // Verify, remove and point go to the chosen team's claim, or else to the next team
              // (in order) that has one: random teams would mostly meet "no such domain".
              const claimants = await p.ctx.db
                .selectFrom('domains')
                .innerJoin('projects', 'projects.id', 'domains.project_id')
                .select('projects.slug')
                .where('domains.hostname', '=', hostname)
                .where('domains.state', '<>', 'removed')
                .execute();
              const start = TEAMS.indexOf(s.team);
              const who =
                s.kind === 'add'
                  ? s.team
                  : (TEAMS.map((_, i) => TEAMS[(start + i) % TEAMS.length] as Team).find((t) =>
                      claimants.some((c) => c.slug === t),
                    ) ?? s.team);
              const actor = actors.get(who) as Actor;
              if (s.kind === 'add') await tolerate(() => addDomain(p.ctx, actor, who, hostname));
              if (s.kind === 'verify') await tolerate(() => verifyDomain(p.ctx, actor, who, hostname));
              if (s.kind === 'verifyTwice') {
                await Promise.all([
                  tolerate(() => verifyDomain(p.ctx, actor, who, hostname)),
                  tolerate(() => verifyDomain(p.ctx, actor, who, hostname)),
                ]);
              }
              if (s.kind === 'remove') await tolerate(() => removeDomain(p.ctx, actor, who, hostname));
              if (s.kind === 'removeDuringOrder') {
                issuer.hold(hostname);
                const pass = obtainDueCertificates(p.ctx, {
                  issuer,
                  store,
                  challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
                  nodeId: 'node-b',
                  leaseMs: 15_000,
                });
                // No order for the name may start (nothing due): the pass ends first.
                await Promise.race([issuer.started, pass]);
                await tolerate(() => removeDomain(p.ctx, actor, who, hostname));
                issuer.release();
                await pass;
              }
              if (s.kind === 'point') {
                const label = hostname.split('.')[0] as string;
                const set: DnsRecord[] = [{ name: label, type: 'CNAME', value: `${who}.platform.test` }];
                const claim = await p.ctx.db
                  .selectFrom('domains')
                  .innerJoin('projects', 'projects.id', 'domains.project_id')
                  .select('domains.ownership_token')
                  .where('projects.slug', '=', who)
                  .where('domains.hostname', '=', hostname)
                  .where('domains.state', '<>', 'removed')
                  .executeTakeFirst();
                if (s.proof && claim) {
                  set.push({
                    name: `_kennel-challenge.${label}`,
                    type: 'TXT',
                    value: ownershipValue(claim.ownership_token),
                  });
                }
                records.set(hostname, set);
                await publish();
              }
              await check(hostnames, false, text);
            }
          } finally {
            issuer.release();
            for (const t of TEAMS) {
              for (const h of hostnames)
                await tolerate(() => removeDomain(p.ctx, actors.get(t) as Actor, t, h));
            }
          }
        }),
        {
          numRuns: RUNS,
          seed: SEED,
          endOnFailure: false,
          // Run first, so every run covers a takeover with its certificate, and a remove racing
          // the new owner's order, whatever the seed draws.
          examples: [[TAKEOVER]],
        },
      );
      // What the runs reached, so a budget that explores nothing shows.
      const reached = await p.ctx.db
        .selectFrom('domain_events')
        .select(['action', 'outcome'])
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .groupBy(['action', 'outcome'])
        .orderBy('action')
        .execute();
      process.stdout.write(
        `# model: ${run} sequences; ${reached.map((r) => `${r.action}→${r.outcome} ${r.n}`).join(', ')}\n`,
      );
    });
  });
}
