import { stringify } from 'yaml';
import { buildOpenApiDocument } from '../lib/http-api/index.ts';
import { petstoreErrors } from './errors.ts';
import type { PetstoreDeps } from './routes/index.ts';
import { petstoreOperations } from './routes/index.ts';
import { MAX_PAGE_SIZE } from './routes/shared.ts';
import { schemas } from './schemas.ts';
import { ORDER_TRANSITIONS, STATUS_TABLE } from './stock-rules.ts';

export const INTERFACE_VERSION = '1.0.0';
export const BODY_LIMIT_BYTES = 1024 * 1024;

function description(): string {
  const statusRows = STATUS_TABLE.map((r) => `| ${r.when} | \`${r.status}\` |`).join('\n');
  const orderRows = ORDER_TRANSITIONS.map((t) => {
    const q = 'q';
    const delta = (d: (n: number) => number) => {
      const v = d(1);
      return v === 0 ? '—' : v > 0 ? `+${q}` : `−${q}`;
    };
    return `| ${t.from ?? '(none)'} | ${t.event} | ${t.to} | ${delta(t.stockDelta)} | ${delta(t.reservedDelta)} | ${t.also} |`;
  }).join('\n');
  return `Pets, their categories, orders for them and a stock inventory per pet.

## Stock, orders and statuses

\`stock\` is InventoryItem.quantity, the units that can still be ordered. Units held by open orders (of quantity q) are counted apart. Pet.status and InventoryItem.status are always equal and follow this table (first matching row):

| condition | status |
|---|---|
${statusRows}

Orders move stock like this; any other event is refused (409 \`order_already_complete\`):

| order from | event | order to | stock | held by open orders | also |
|---|---|---|---|---|---|
${orderRows}

## Errors

Every answer that is not 2xx has the \`Error\` body \`{ code, message, status }\`; \`status\` equals the HTTP status and \`message\` says what to do. Each operation lists its codes per status in \`x-error-codes\`.

## Limits

Bodies up to ${BODY_LIMIT_BYTES} bytes (413 \`body_too_large\` above). Lists return at most ${MAX_PAGE_SIZE} items per page (default 20); follow \`Link: rel="next"\`.

## Versioning

This is version ${INTERFACE_VERSION} of the interface, described in OpenAPI 3.0.3. A deprecated operation is marked \`deprecated\` with its sunset date in \`x-sunset\`, and answers with \`Deprecation\`, \`Sunset\` and \`Link: rel="successor-version"\` headers until then.`;
}

/** The Petstore's OpenAPI 3.0.3 document, built from the operations the server registers. */
export function petstoreDocument(deprecation: PetstoreDeps['deprecation']): Record<string, unknown> {
  return buildOpenApiDocument({
    info: { title: 'Petstore API', version: INTERFACE_VERSION, description: description() },
    servers: [{ url: '/', description: 'This server' }],
    tags: [
      { name: 'Pets', description: 'Pets and the categories they belong to' },
      { name: 'Store', description: 'Orders and the stock inventory' },
    ],
    schemas,
    operations: petstoreOperations(deprecation),
    errors: petstoreErrors.specs,
    errorSchema: 'Error',
  });
}

export function toYaml(document: Record<string, unknown>): string {
  return stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 });
}
