import { type JsonSchema, type ParameterSpec, ref } from '../../../lib/http-api/index.ts';
import type { PlatformErrorCode } from '../../errors.ts';

/**
 * What the management API's routes declare in its document, each shape declared once: their path
 * parameters (`pathParameters`), the JSON bodies they take (`jsonBody`) and the answers they
 * document (`ok`, `created`, `accepted`, `noContent`).
 */

/** A path parameter holding a row id (1 or more). */
export const idParam = (name: string, description: string) => ({
  name,
  in: 'path' as const,
  description,
  schema: { type: 'integer' as const, minimum: 1 },
});

const textParam = (name: string, description: string, schema: Record<string, unknown>) => ({
  name,
  in: 'path' as const,
  description,
  schema: { type: 'string' as const, ...schema },
});

/** A path parameter, and what the API answers when it names nothing the caller can see. */
interface PathParameter {
  readonly spec: ParameterSpec;
  readonly notFound: PlatformErrorCode;
}

/**
 * Every path parameter of the management API, by name, each declared once: a route takes the
 * ones its path names (operation.ts), and can answer their not-found codes.
 */
export const pathParameters = {
  slug: {
    spec: textParam('slug', 'Project slug', { minLength: 1, maxLength: 63 }),
    notFound: 'project_not_found',
  },
  hostname: {
    spec: textParam('hostname', 'The custom domain (Unicode or punycode)', { minLength: 1, maxLength: 300 }),
    notFound: 'domain_not_found',
  },
  deployId: { spec: idParam('deployId', 'Deploy id'), notFound: 'deploy_not_found' },
  linkId: { spec: idParam('linkId', 'Share link id'), notFound: 'preview_link_not_found' },
  teamId: { spec: idParam('teamId', 'Team id'), notFound: 'team_not_found' },
  userId: { spec: idParam('userId', 'User id of the member'), notFound: 'member_not_found' },
  invitationId: { spec: idParam('invitationId', 'Invitation id'), notFound: 'invitation_not_found' },
  messageId: {
    spec: textParam('messageId', 'Message id (msg_…)', { pattern: '^msg_[A-Za-z0-9_-]{1,64}$' }),
    notFound: 'delivery_not_found',
  },
  tokenId: { spec: idParam('tokenId', 'Token id'), notFound: 'token_not_found' },
  grantId: { spec: idParam('grantId', 'Grant id'), notFound: 'origin_grant_not_found' },
} as const satisfies Readonly<Record<string, PathParameter>>;

/** The path parameters' values as the schemas type them: an id is a number, the rest text. */
export type PathIds = {
  -readonly [Name in keyof typeof pathParameters]: (typeof pathParameters)[Name]['spec']['schema']['type'] extends 'integer'
    ? number
    : string;
};

const byName: Readonly<Record<string, PathParameter>> = pathParameters;

/** The path parameter `{name}` in a route's path stands for, if the table has it. */
export const pathParameterNamed = (name: string): PathParameter | undefined => byName[name];

/** The schema named `name`, or (`[name]`) a list of them. */
const schemaOf = (name: string | readonly [string]): JsonSchema =>
  typeof name === 'string' ? ref(name) : { type: 'array', items: ref(name[0]) };

/** A request body of the schema `name`. */
export const jsonBody = (description: string, name: string) => ({ description, schema: ref(name) });

/** 200 with a body of the schema `name` (`[name]`: a list of them). */
export const ok = (description: string, name: string | readonly [string]) => ({
  200: { description, schema: schemaOf(name) },
});

/** 201 with the schema `name`: what was made. */
export const created = (description: string, name: string) => ({ 201: { description, schema: ref(name) } });

/** 202 with the schema `name`: what was queued. */
export const accepted = (description: string, name: string) => ({ 202: { description, schema: ref(name) } });

/** 204: done, nothing to send back. */
export const noContent = (description: string) => ({ 204: { description } });
