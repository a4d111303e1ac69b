import type { Kysely } from 'kysely';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { type DnsRecord, startDns, type TestDns } from './dns.ts';

/**
 * The DNS the platform tests ask (NSD, test/support/dns.ts), set up in one call: zones with their
 * records, the usual Petstore names, and the setting that points a platform at it.
 */

/** NSD serving each zone of `zones` (a zone's records as its value; none set for an empty list). */
export async function startZones(zones: Record<string, readonly DnsRecord[]>): Promise<TestDns> {
  const dns = await startDns({ zones: Object.keys(zones) });
  for (const [zone, records] of Object.entries(zones)) {
    if (records.length > 0) await dns.setRecords(zone, [...records]);
  }
  return dns;
}

/**
 * platform.test with the project `petstore` on 127.0.0.1, and example.test where each of `cnames`
 * points at petstore.platform.test, then `more` records.
 */
export const petstoreZones = (cnames: readonly string[], more: readonly DnsRecord[] = []) => ({
  'platform.test': [{ name: 'petstore', type: 'A', value: '127.0.0.1' }] as DnsRecord[],
  'example.test': [
    ...cnames.map((name): DnsRecord => ({ name, type: 'CNAME', value: 'petstore.platform.test' })),
    ...more,
  ],
});

/** caa.test: its apex allows only the CA `issuer` (a CAA record); www is a CNAME to `target`. */
export const caaZone = (issuer: string, target: string): DnsRecord[] => [
  { name: '@', type: 'CAA', value: `0 issue "${issuer}"` },
  { name: 'www', type: 'CNAME', value: target },
];

/** The settings that make a platform ask `dns`. */
export const dnsEnv = (dns: TestDns) => ({ DNS_SERVERS: dns.servers.join(',') });

/** The not-removed domain `hostname` of project `slug`, as a query to select from. */
export const liveDomain = (db: Kysely<PlatformTables>, slug: string, hostname: string) =>
  db
    .selectFrom('domains')
    .innerJoin('projects', 'projects.id', 'domains.project_id')
    .where('projects.slug', '=', slug)
    .where('domains.hostname', '=', hostname)
    .where('domains.state', '<>', 'removed');

/** example.test's TXT record `name` holding `value` (an ownership token, as a domain's records show it). */
export const addOwnershipTxt = (dns: TestDns, name: string, value: string | undefined) =>
  dns.addRecord('example.test', { name, type: 'TXT', value: value ?? '' });
