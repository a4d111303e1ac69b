import { ApiClient, PETSTORE_API, path } from '../api-client.ts';
import { type Call, defineCommand, type GroupSpec, idArg } from '../command.ts';
import { CliError, EXIT } from '../errors.ts';
import { normaliseServer } from '../server-address.ts';

/**
 * API keys of a Petstore API. These talk to the Petstore itself (`--url`, default
 * PETSTORE_URL or http://localhost:4010), not to the platform, with an admin key (`--key`, else
 * PETSTORE_API_KEY).
 */

interface PetstoreKey {
  id: number;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: string;
  revokedAt?: string;
  secret?: string;
}

const SCOPES = ['pets:write', 'store', 'admin'];
const DEFAULT_URL = 'http://localhost:4010';

const connection = {
  url: {
    type: 'string',
    value: 'URL',
    description: `The Petstore API's address (default: PETSTORE_URL, else ${DEFAULT_URL})`,
  },
  key: {
    type: 'string',
    value: 'KEY',
    description:
      'An admin API key (default: PETSTORE_API_KEY); prefer the variable, so it stays out of shell history',
  },
} as const;

function petstore(call: Call): ApiClient {
  const flag = call.string('url');
  const [url, from] =
    flag !== undefined
      ? [flag, '--url']
      : call.io.env.PETSTORE_URL
        ? [call.io.env.PETSTORE_URL, 'PETSTORE_URL']
        : [DEFAULT_URL, 'The default Petstore address'];
  const key = call.string('key') ?? call.io.env.PETSTORE_API_KEY;
  if (key === undefined || key === '') {
    throw new CliError(
      'No Petstore API key: pass --key or set PETSTORE_API_KEY to a key with the admin scope (the Petstore prints one at its first start).',
      EXIT.auth,
      'not_signed_in',
    );
  }
  return new ApiClient({
    server: normaliseServer(url, from),
    token: key,
    userAgent: 'kennel-cli',
    identity: PETSTORE_API,
  });
}

export const keysGroup: GroupSpec = {
  name: 'keys',
  summary: 'API keys of the Petstore API (admin scope)',
  description:
    'Keys are sent as Authorization: Bearer <key>. Scopes: pets:write (change pets and categories), store (orders and inventory), admin (keys and webhooks). A new key is shown once; the Petstore keeps only its hash.',
  commands: [
    defineCommand({
      name: 'keys create',
      summary: 'Create a key and print it once',
      options: {
        scope: {
          type: 'string',
          value: 'SCOPES',
          description: `Comma-separated scopes: ${SCOPES.join(', ')}`,
          required: true,
        },
        name: { type: 'string', value: 'NAME', description: 'What the key is for (default: the scopes)' },
        ...connection,
      },
      examples: [
        'kennel keys create --scope pets:write --name "shop front"',
        'kennel keys create --scope store,pets:write --url http://localhost:4010 --json',
      ],
      async run(call) {
        const scopes = (call.string('scope') ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        if (scopes.length === 0) throw call.usage('--scope needs at least one scope.');
        const unknown = scopes.filter((s) => !SCOPES.includes(s));
        if (unknown.length > 0) {
          throw call.usage(`Unknown scope ${unknown.join(', ')}: use ${SCOPES.join(', ')}.`);
        }
        const unique = [...new Set(scopes)];
        const name = call.string('name') ?? unique.join(' ');
        const key = await petstore(call).post<PetstoreKey>('/keys', { name, scopes: unique });
        call.out.result(key, () => {
          call.out.line(`Created key ${key.id} (${key.name}) with ${key.scopes.join(', ')}:`);
          call.out.line();
          call.out.line(`  ${key.secret}`);
          call.out.line();
          call.out.line('This is the only time it is shown; the Petstore keeps only its hash.');
        });
      },
    }),
    defineCommand({
      name: 'keys list',
      summary: 'List keys (never their secrets)',
      options: { ...connection },
      examples: ['kennel keys list', 'kennel keys list --json'],
      async run(call) {
        call.out.list(await petstore(call).get<PetstoreKey[]>('/keys'), {
          headers: ['ID', 'Name', 'Prefix', 'Scopes', 'Created', 'Revoked'],
          row: (k) => [k.id, k.name, `${k.prefix}…`, k.scopes.join(','), k.createdAt, k.revokedAt ?? ''],
        });
      },
    }),
    defineCommand({
      name: 'keys revoke',
      summary: 'Revoke a key: it stops working at once',
      args: ['ID'],
      options: { ...connection },
      examples: ['kennel keys revoke 4'],
      async run(call) {
        const id = idArg(call, 'ID');
        const key = await petstore(call).delete<PetstoreKey>(path`/keys/${id}`);
        call.out.resultLine(key, `Revoked key ${key.id} (${key.name}, ${key.prefix}…).`);
      },
    }),
  ],
};
