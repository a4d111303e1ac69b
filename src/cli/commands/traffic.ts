import type { ProjectTraffic, TrafficGroup } from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { type Call, projectCommand } from '../command.ts';
import type { Cell } from '../output.ts';

const GROUPINGS = ['operation', 'caller', 'status'] as const;
type Grouping = (typeof GROUPINGS)[number];

/** A latency for people: `0.42 ms`, `12.3 ms`, `250 ms`; `-` when there were no requests. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return `${ms < 1 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : Math.round(ms)} ms`;
}

const rate = (errors: number, requests: number) =>
  requests === 0 ? '-' : `${((100 * errors) / requests).toFixed(1)}%`;

/** `deprecated, sunset 2026-12-01` for a deprecated operation. */
function lifecycle(group: TrafficGroup): string {
  if (!group.deprecated) return '';
  return group.sunset ? `deprecated, sunset ${group.sunset.slice(0, 10)}` : 'deprecated';
}

/** The table of groups, per grouping: its columns and each group's cells. */
const TABLES: Record<Grouping, { headers: string[]; row: (g: TrafficGroup) => Cell[] }> = {
  operation: {
    headers: ['Operation', 'Calls', 'Errors', 'Error rate', 'p50', 'p95', 'p99', 'Lifecycle'],
    row: (g) => [
      g.key,
      g.requests,
      g.errors,
      rate(g.errors, g.requests),
      formatMs(g.p50),
      formatMs(g.p95),
      formatMs(g.p99),
      lifecycle(g),
    ],
  },
  status: {
    headers: ['Status', 'Calls', 'p50', 'p95', 'p99'],
    row: (g) => [g.key, g.requests, formatMs(g.p50), formatMs(g.p95), formatMs(g.p99)],
  },
  caller: {
    headers: ['Caller', 'Kind', 'Calls', 'Errors', 'Error rate', 'Last seen'],
    row: (g) => [g.caller, g.callerKind, g.requests, g.errors, rate(g.errors, g.requests), g.lastSeenAt],
  },
};

const minuteOf = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')}`;

function printTraffic(call: Call, slug: string, traffic: ProjectTraffic): void {
  const { out } = call;
  const { totals } = traffic;
  out.line(
    `Traffic of ${slug} from ${minuteOf(traffic.from)} to ${minuteOf(traffic.to)} UTC: ${totals.requests} request${totals.requests === 1 ? '' : 's'}, ${totals.errors} error${totals.errors === 1 ? '' : 's'} (${rate(totals.errors, totals.requests)}), p50 ${formatMs(totals.p50)}, p95 ${formatMs(totals.p95)}, p99 ${formatMs(totals.p99)}.`,
  );
  if (traffic.groups.length === 0) {
    out.line('No requests in this range.');
    return;
  }
  const table = TABLES[traffic.grouping];
  out.line();
  out.table(table.headers, traffic.groups.map(table.row));
}

export const trafficCommand = projectCommand({
  name: 'traffic',
  summary: "Show a project's requests, errors and latency by operation, caller or status",
  options: {
    since: {
      type: 'string',
      value: 'WHEN',
      description: 'Start: a duration before now (1h, 24h, 7d, 30d) or an ISO date and time (default 24h)',
    },
    until: {
      type: 'string',
      value: 'WHEN',
      description: 'End: a duration before now or an ISO date and time (default now)',
    },
    by: {
      type: 'string',
      value: 'GROUPING',
      description: 'Group by operation (the default), caller or status',
    },
  },
  description:
    "Totals and a table of the busiest groups, summed over every edge node: by operation (calls, errors — answers with status 500 or above —, error rate, latency p50/p95/p99 within 1%, deprecated operations and their sunset marked), by caller (its label: a key's first characters or a truncated address; never the credential) or by status. --json prints the API's answer, with a series per minute (ranges up to 48 hours) or per hour. docs/traffic.md says what is recorded and kept.",
  examples: [
    'kennel traffic petstore',
    'kennel traffic petstore --since 7d --by caller',
    'kennel traffic petstore --json',
  ],
  async run(call, slug) {
    const by = call.string('by') ?? 'operation';
    if (!(GROUPINGS as readonly string[]).includes(by))
      throw call.usage(`--by must be one of ${GROUPINGS.join(', ')} (got "${by}").`);
    const query = new URLSearchParams({ by });
    const since = call.string('since');
    const until = call.string('until');
    if (since !== undefined) query.set('since', since);
    if (until !== undefined) query.set('until', until);
    const traffic = await call
      .api()
      .get<ProjectTraffic>(`${path`/api/v1/projects/${slug}/traffic`}?${query}`);
    call.out.result(traffic, () => printTraffic(call, slug, traffic));
    return 0;
  },
});
