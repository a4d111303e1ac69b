import type {
  AddedDomain,
  ApplyResult,
  CheckResult,
  DnsRecord,
  Domain,
  DomainDetail,
} from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { type Call, type GroupSpec, projectCommand, scopedCommand } from '../command.ts';
import { EXIT } from '../errors.ts';
import { readTextFile } from '../files.ts';
import type { Output } from '../output.ts';
import { formatSeconds, parseDuration } from '../progress.ts';
import { confirmed, YES_OPTION } from '../prompt.ts';

const DEFAULT_TIMEOUT = '10m';
const DEFAULT_INTERVAL = '5s';
const MIN_INTERVAL_MS = 1000;

const domainsPath = (slug: string) => path`/api/v1/projects/${slug}/domains`;
const domainPath = (slug: string, hostname: string) => path`/api/v1/projects/${slug}/domains/${hostname}`;
const configPath = (slug: string) => path`/api/v1/projects/${slug}/domain-config`;

function displayName(d: Pick<Domain, 'hostname' | 'unicode'>): string {
  return d.unicode && d.unicode !== d.hostname ? `${d.unicode} (${d.hostname})` : d.hostname;
}

/** The records to create, as the dashboard shows them: Type, Name, Value, TTL (and a note when any). */
export function printRecords(out: Output, records: readonly DnsRecord[], indent = '  '): void {
  const notes = records.some((r) => r.note);
  out.table(
    notes ? ['Type', 'Name', 'Value', 'TTL', 'Note'] : ['Type', 'Name', 'Value', 'TTL'],
    records.map((r) => (notes ? [r.type, r.name, r.value, r.ttl, r.note] : [r.type, r.name, r.value, r.ttl])),
    indent,
  );
}

interface ProjectDomain {
  readonly slug: string;
  readonly hostname: string;
}

/** A command on one domain of a project: SLUG and HOSTNAME come first; `run` gets both. */
const domainCommand = scopedCommand(
  ['SLUG', 'HOSTNAME'],
  (call): ProjectDomain => ({ slug: call.args.SLUG ?? '', hostname: call.args.HOSTNAME ?? '' }),
);

function duration(call: Call, option: string, fallback: string): number {
  const text = call.string(option) ?? fallback;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    throw call.usage(`--${option} must be a duration such as 30s, 10m or 1h (got "${text}").`);
  }
  return ms;
}

/** The outcome of Verify or Re-verify, for people. */
function printCheck(out: Output, result: CheckResult, verified: boolean, extra?: string): void {
  const { domain, outcome } = result;
  if (verified && domain.status === 'live') {
    // Nothing to verify: say so, with what a person checks next (the certificate's expiry).
    const until = domain.certificate?.notAfter;
    out.line(
      `✓ ${displayName(domain)} is live: served over HTTPS${until ? ` with a certificate valid until ${until}` : ''}. There is nothing to verify.`,
    );
    out.fields(
      [
        ['DNS', outcome.message],
        ['Renewal', 'automatic, before the certificate expires'],
      ],
      '  ',
    );
    return;
  }
  if (verified) {
    out.line(`✓ ${displayName(domain)} is verified.`);
    out.fields(
      [
        ['DNS', outcome.message],
        ...(domain.failure
          ? ([
              ['Certificate', `failed (${domain.failure.reason}): ${domain.failure.message ?? ''}`.trim()],
              ['Remedy', domain.failure.remedy],
            ] as const)
          : ([['Next', nextAfterVerified(domain) ?? outcome.remedy]] as const)),
      ],
      '  ',
    );
    return;
  }
  const reason = domain.reason ?? outcome.reason;
  out.line(`✗ ${displayName(domain)} is not verified (${reason})${extra ? `: ${extra}` : ''}.`);
  out.fields(
    [
      ['State', domain.state],
      ['DNS', domain.message ?? outcome.message],
      ['Remedy', domain.remedy ?? outcome.remedy],
    ],
    '  ',
  );
  if (domain.records.length > 0) {
    out.line('  Records to create:');
    printRecords(out, domain.records, '    ');
  }
  out.line(`  Then: kennel domains verify ${domain.project} ${domain.hostname} --wait`);
}

/**
 * What happens next for a verified domain, from its certificate: never "Nothing to do" when the
 * last attempt failed (Verify has just started a fresh one).
 */
function nextAfterVerified(domain: Domain): string | undefined {
  const certificate = domain.certificate;
  if (!certificate) return undefined;
  if (certificate.notAfter) return `Served with a certificate valid until ${certificate.notAfter}.`;
  if (certificate.state === 'pending' || certificate.state === 'ordering') {
    return `The certificate is being ordered${certificate.nextAttemptAt ? ` (from ${certificate.nextAttemptAt})` : ''}; it is usually issued within a couple of minutes.`;
  }
  return undefined;
}

/** The certificate in a few words: its state, and its expiry once one is served. */
function certificateText(domain: Domain): string | undefined {
  const certificate = domain.certificate;
  if (!certificate) return undefined;
  return certificate.notAfter ? `${certificate.state} (until ${certificate.notAfter})` : certificate.state;
}

function detailText(
  detail: Record<string, unknown> | null | undefined,
  webhook?: { type: string; state: string } | null,
): string {
  const parts = Object.entries(detail ?? {})
    .filter(([key, value]) => key !== 'message' && key !== 'webhook' && value !== null && value !== undefined)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join(',') : String(value)}`);
  if (webhook) parts.push(`webhook=${webhook.type}:${webhook.state}`);
  return parts.join(' ');
}

async function runCheck(
  call: Call,
  { slug, hostname }: ProjectDomain,
  kind: 'verify' | 'reverify',
): Promise<number> {
  const wait = kind === 'verify' && call.flag('wait');
  if (!wait && (call.string('timeout') !== undefined || call.string('interval') !== undefined)) {
    throw call.usage('--timeout and --interval go with --wait.');
  }
  const timeoutMs = wait ? duration(call, 'timeout', DEFAULT_TIMEOUT) : 0;
  const intervalMs = wait ? Math.max(MIN_INTERVAL_MS, duration(call, 'interval', DEFAULT_INTERVAL)) : 0;
  const api = call.api();
  const route = `${domainPath(slug, hostname)}/${kind}`;
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    const result = await call.progress.during(
      `Checking DNS for ${hostname}${attempt > 1 ? ` (attempt ${attempt})` : ''}…`,
      api.post<CheckResult>(route),
    );
    const verified = result.domain.state === 'verified' && result.outcome.ok;
    const left = deadline - Date.now();
    if (verified || !wait || left <= 0) {
      call.out.result(result, () =>
        printCheck(
          call.out,
          result,
          verified,
          wait
            ? `still not verified after ${attempt} checks in ${formatSeconds(timeoutMs / 1000)}`
            : undefined,
        ),
      );
      return verified ? EXIT.ok : EXIT.failed;
    }
    const reason = result.domain.reason ?? result.outcome.reason;
    await call.progress.countdown(
      Math.min(intervalMs, left),
      (seconds) =>
        `Check ${attempt}: ${hostname} is not verified yet (${reason}). Checking again in ${formatSeconds(seconds)}; giving up in ${formatSeconds((deadline - Date.now()) / 1000)}.`,
    );
  }
}

export const domainsGroup: GroupSpec = {
  name: 'domains',
  summary: 'Custom domains: add, verify, inspect, remove; YAML apply and export',
  description:
    'A custom domain needs a team on the Pro plan or above and a successful deploy. Add it, create the DNS record shown (a CNAME for a subdomain, TTL 3600), then verify: once DNS points at the platform the domain is verified and its certificate is issued automatically. Hostnames may be given in Unicode or punycode.',
  commands: [
    domainCommand({
      name: 'domains add',
      summary: 'Add a custom domain and show the DNS records to create',
      examples: ['kennel domains add petstore shop.example.com'],
      async run(call, { slug, hostname }) {
        const added = await call.progress.during(
          `Adding ${hostname}…`,
          call.api().post<AddedDomain>(domainsPath(slug), { hostname }),
        );
        call.out.result(added, () => {
          const { out } = call;
          const { domain, dns, warnings } = added;
          out.line(
            `Added ${displayName(domain)} to ${slug}; it stays ${domain.state} until DNS points at the platform.`,
          );
          out.line();
          out.line(
            `Create ${domain.records.length === 1 ? 'this DNS record' : 'these DNS records'} at your DNS provider:`,
          );
          printRecords(out, domain.records);
          out.line();
          if (dns.check) {
            out.line(`DNS now: ${dns.check.message}`);
            if (!dns.check.ok) out.line(`  ${dns.check.remedy}`);
          }
          if (dns.caa && !dns.caa.ok) {
            out.line(`Warning: ${dns.caa.message}`);
            out.line(`  ${dns.caa.remedy}`);
          }
          for (const warning of warnings) out.line(`Warning: ${warning.message ?? warning.code}`);
          out.line();
          out.line(
            dns.check?.ok
              ? `DNS already points at the platform. Verify now: kennel domains verify ${slug} ${domain.hostname}`
              : `Then verify: kennel domains verify ${slug} ${domain.hostname} --wait`,
          );
        });
      },
    }),
    projectCommand({
      name: 'domains list',
      summary: "List a project's custom domains and their state",
      examples: ['kennel domains list petstore'],
      async run(call, slug) {
        call.out.list(await call.api().get<Domain[]>(domainsPath(slug)), {
          headers: ['Hostname', 'State', 'Reason', 'Status', 'Certificate', 'Verified', 'Last check'],
          row: (d) => [
            displayName(d),
            d.state,
            d.failure?.reason ?? d.reason,
            d.status,
            certificateText(d),
            d.verifiedAt,
            d.lastCheckedAt,
          ],
          empty: `${slug} has no custom domains. Add one with kennel domains add ${slug} HOSTNAME.`,
        });
      },
    }),
    domainCommand({
      name: 'domains inspect',
      summary: 'Show a domain: state, reason, remedy, records and history',
      examples: ['kennel domains inspect petstore shop.example.com'],
      async run(call, { slug, hostname }) {
        const detail = await call.api().get<DomainDetail>(domainPath(slug, hostname));
        call.out.result(detail, () => {
          const { out } = call;
          const d = detail.domain;
          out.line(`${displayName(d)} (${d.kind} of ${d.project})`);
          out.fields([
            ['Status', d.status],
            ['State', d.state],
            // A failed certificate has no domain reason: the failure carries its reason and remedy.
            ['Reason', d.failure?.reason ?? d.reason],
            ['DNS showed', d.message],
            ['Remedy', d.failure?.remedy ?? d.remedy],
            ['Verified at', d.verifiedAt],
            ['Last checked', d.lastCheckedAt],
            ['Next check', d.nextCheckAt],
            ['Checks until', d.checksUntil],
            ['Certificate', certificateText(d)],
            ['Cert. failure', d.certificate?.state === 'failed' ? d.certificate.reason : undefined],
            ['Next attempt', d.certificate?.nextAttemptAt],
            ['Re-verify from', d.reverifyAvailableAt],
            ['Added', d.createdAt],
          ]);
          out.line();
          out.line('DNS records to create:');
          printRecords(out, d.records);
          out.line();
          out.line('History:');
          out.table(
            ['When', 'Who', 'Action', 'State after', 'Detail'],
            detail.history.map((e) => [e.at, e.actor, e.action, e.outcome, detailText(e.detail, e.webhook)]),
            '  ',
          );
        });
      },
    }),
    domainCommand({
      name: 'domains verify',
      summary: 'Check DNS now; with --wait, keep checking until verified',
      options: {
        wait: { type: 'boolean', description: 'Keep checking every few seconds until verified or --timeout' },
        timeout: {
          type: 'string',
          value: 'DURATION',
          description: `How long --wait keeps trying (default ${DEFAULT_TIMEOUT})`,
        },
        interval: {
          type: 'string',
          value: 'DURATION',
          description: `Pause between checks with --wait (default ${DEFAULT_INTERVAL}, at least 1s)`,
        },
      },
      description:
        'Exit code 0 when the domain is verified, 1 when it is not; then the reason and the remedy are printed. DNS changes usually show within minutes but can take up to 48 hours; the platform also re-checks on its own.',
      examples: [
        'kennel domains verify petstore shop.example.com',
        'kennel domains verify petstore shop.example.com --wait --timeout 30m',
      ],
      run: (call, domain) => runCheck(call, domain, 'verify'),
    }),
    domainCommand({
      name: 'domains reverify',
      summary: 'Check a verified domain again and retry its certificate (after 30 minutes without one)',
      examples: ['kennel domains reverify petstore shop.example.com'],
      run: (call, domain) => runCheck(call, domain, 'reverify'),
    }),
    domainCommand({
      name: 'domains remove',
      summary: 'Remove a domain: serving traffic on it stops immediately',
      options: YES_OPTION,
      description:
        'Asks for confirmation on a terminal; elsewhere --yes is required. Redirects from or to the domain are removed with it. Answering no exits with 1.',
      examples: [
        'kennel domains remove petstore old.example.com',
        'kennel domains remove petstore old.example.com --yes',
      ],
      async run(call, { slug, hostname }) {
        const sure = await confirmed(call, {
          unattended:
            'Removing a domain stops its traffic at once: confirm with --yes (there is no terminal to ask on).',
          question: () => `Remove ${hostname} from ${slug}? Serving traffic on it stops immediately.`,
          declined: 'Nothing was removed.',
        });
        if (!sure) return EXIT.failed;
        await call.api().delete(domainPath(slug, hostname));
        call.out.resultLine(
          { project: slug, hostname, removed: true },
          `Removed ${hostname} from ${slug}; it no longer serves traffic.`,
        );
      },
    }),
    projectCommand({
      name: 'domains apply',
      summary: 'Apply a YAML domain configuration (primary, redirects, names)',
      args: ['FILE'],
      options: { prune: { type: 'boolean', description: 'Also remove domains the file does not name' } },
      description: `Adds the domains the file names and the project lacks, sets the primary and replaces the redirects, in one step: an invalid file changes nothing, and each problem is reported with its line and column (exit 1). FILE is - for stdin. The format is what kennel domains export prints:

  domains:
    primary: shop.example.com
    redirects:
      - from: www.example.com
        to: shop.example.com
        status: 301
    names:
      - shop.example.com
      - www.example.com`,
      examples: [
        'kennel domains apply petstore domains.yaml',
        'kennel domains apply petstore domains.yaml --prune',
      ],
      async run(call, slug) {
        const file = call.args.FILE ?? '';
        const yaml = await readTextFile(call.io, file);
        const result = await call
          .api()
          .put<ApplyResult>(configPath(slug), { yaml, ...(call.flag('prune') ? { prune: true } : {}) });
        call.out.result(result, () => {
          const { out } = call;
          const list = (names: string[]) => (names.length > 0 ? names.join(', ') : 'none');
          out.line(`Applied ${file === '-' ? 'the configuration' : file} to ${slug}.`);
          out.fields([
            ['Added', list(result.added)],
            ['Removed', list(result.removed)],
          ]);
          for (const name of result.added) out.line(`Next: kennel domains verify ${slug} ${name} --wait`);
        });
      },
    }),
    projectCommand({
      name: 'domains export',
      summary: "Print the project's domain configuration as YAML (what apply accepts)",
      description:
        'The output can be edited and applied back: kennel domains export s > d.yaml && kennel domains apply s d.yaml.',
      examples: ['kennel domains export petstore > domains.yaml'],
      async run(call, slug) {
        const body = await call.api().get<{ yaml: string }>(configPath(slug));
        call.out.result(body, () => call.out.raw(body.yaml));
      },
    }),
  ],
};
