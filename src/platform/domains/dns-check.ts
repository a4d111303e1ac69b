/**
 * The DNS checks moved to src/platform/dns/dns-check.ts, below both domains/ and certificates/
 * (certificates check CAA before an order and must not import domains/). This name stays for the
 * importers outside the platform (main, bench, test support, the dashboard tests).
 */
export * from '../dns/dns-check.ts';
