export {
  type CaaProperty,
  checkApex,
  checkCaa,
  checkSubdomain,
  createDnsResolver,
  DNS_CHECK_REASONS,
  type DnsCheckOutcome,
  type DnsCheckReason,
  type DnsFound,
  type DnsResolver,
  type DnsResolverConfig,
  type PlatformAddresses,
} from './dns-check.ts';
