import type { PlatformConfig } from '../../config/index.ts';
import { ownershipRecordName, type ParsedHostname } from '../../lib/hostname.ts';
import type { DnsRecord } from '../api-types.ts';

/**
 * One DNS record the owner creates at their provider, as the dashboard shows it (the schema's
 * DnsRecord): `name` relative to the apex (`shop`, `@`, `_kennel-challenge.shop`); `alternative`
 * records are for providers without ALIAS/ANAME.
 */
export type DnsRecordToCreate = DnsRecord;

export const RECOMMENDED_TTL = 3600;

export function ownershipValue(token: string): string {
  return `kennel-verification=${token}`;
}

function relative(fullName: string, apex: string): string {
  return fullName === apex ? '@' : fullName.slice(0, -(apex.length + 1));
}

/** One record, every one at the recommended TTL. */
function record(
  type: DnsRecordToCreate['type'],
  name: string,
  value: string,
  role: DnsRecordToCreate['role'],
  note?: string,
): DnsRecordToCreate {
  return { type, name, value, ttl: RECOMMENDED_TTL, role, ...(note === undefined ? {} : { note }) };
}

const WITHOUT_ALIAS = 'If your provider has no ALIAS/ANAME.';

/**
 * The records to create for a hostname (seed 001, "DNS record to create"): a CNAME to the
 * project's default address for a subdomain; for an apex, an ALIAS/ANAME to it with the A/AAAA
 * alternative, plus the TXT ownership token (flattened addresses cannot tell projects apart).
 * A subdomain also gets the TXT record when it must prove ownership (taken over from another
 * project).
 */
export function recordsToCreate(
  parsed: Pick<ParsedHostname, 'hostname' | 'kind' | 'apex'>,
  defaultHost: string,
  token: string,
  config: Pick<PlatformConfig, 'platformAddressesV4' | 'platformAddressesV6'>,
  needsOwnershipProof: boolean,
): DnsRecordToCreate[] {
  const ownership = record(
    'TXT',
    relative(ownershipRecordName(parsed.hostname), parsed.apex),
    ownershipValue(token),
    'ownership',
    'Proves the domain is yours.',
  );
  if (parsed.kind === 'subdomain') {
    const cname = record('CNAME', relative(parsed.hostname, parsed.apex), defaultHost, 'required');
    return needsOwnershipProof ? [cname, ownership] : [cname];
  }
  return [
    record('ALIAS', '@', defaultHost, 'required', 'Called ANAME by some providers.'),
    ...config.platformAddressesV4.map((address) => record('A', '@', address, 'alternative', WITHOUT_ALIAS)),
    ...config.platformAddressesV6.map((address) =>
      record('AAAA', '@', address, 'alternative', WITHOUT_ALIAS),
    ),
    ownership,
  ];
}
