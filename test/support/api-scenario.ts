import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { managementDocument } from '../../src/platform/api/app.ts';
import type { Dialect } from '../../src/storage/index.ts';
import { ContractChecker } from './contract.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from './platform.ts';

/**
 * The management API through `app.inject()`, for tests: one client every test file shares, and
 * scenario tables (PocketBase's `tests.ApiScenario`) so that who-may-do-what reads as rows —
 * who calls, what, and the status, error code and fields that come back.
 */

let checker: ContractChecker | undefined;
/** Every answer a client receives is checked against the management API's document. */
const contract = () => {
  checker ??= new ContractChecker(managementDocument());
  return checker;
};

/** A JSON body as tests read it: an object's fields or a list's items, unchecked. */
export type AnswerBody = Record<string, unknown> & Record<string, unknown>[];

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  /** The content type, '' when there is none. */
  readonly type: string;
  readonly text: string;
  /** The parsed JSON body; undefined when empty or not JSON (a YAML document). */
  readonly body: AnswerBody;
}

/** Calls one operation: method, URL and an optional JSON body. */
export type Client = (method: string, url: string, body?: unknown) => Promise<Answer>;

/**
 * A caller with these headers (a session cookie and CSRF token, a bearer token, none), from
 * `remoteAddress` (inject's default unless given).
 */
export function apiClient(
  app: FastifyInstance,
  headers: Record<string, string> = {},
  { remoteAddress }: { remoteAddress?: string } = {},
): Client {
  return async (method, url, body) => {
    const response = await app.inject({
      method: method as 'GET',
      url,
      ...(remoteAddress === undefined ? {} : { remoteAddress }),
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const type = response.headers['content-type'] as string | undefined;
    contract().check(method, url, response.statusCode, type, response.body);
    let parsed: unknown;
    try {
      parsed = response.body ? JSON.parse(response.body) : undefined;
    } catch {
      parsed = undefined;
    }
    return {
      status: response.statusCode,
      headers: response.headers,
      type: type ?? '',
      text: response.body,
      body: parsed as AnswerBody,
    };
  };
}

/** A caller with an API token. */
export const bearerClient = (app: FastifyInstance, token: string) =>
  apiClient(app, { authorization: `Bearer ${token}` });

export interface Session {
  /** The signed-in caller (cookie and CSRF token). */
  readonly as: Client;
  readonly auth: { cookie: string; 'x-csrf-token': string };
  readonly cookie: string;
}

/** Signs in with a session cookie (201 or the test fails): the caller, its headers and cookie. */
export async function signInSession(app: FastifyInstance, email: string, password: string): Promise<Session> {
  const answer = await app.inject({ method: 'POST', url: '/api/v1/session', payload: { email, password } });
  assert.equal(answer.statusCode, 201, answer.body);
  const cookie = String(answer.headers['set-cookie']).split(';')[0] ?? '';
  const csrf = (JSON.parse(answer.body) as { csrfToken: string }).csrfToken;
  const auth = { cookie, 'x-csrf-token': csrf };
  return { as: apiClient(app, auth), auth, cookie };
}

/** A signed-in caller (see signInSession). */
export const signedIn = async (app: FastifyInstance, email: string, password: string) =>
  (await signInSession(app, email, password)).as;

/** The id of the account with `email` (the test fails if there is none). */
export const userIdOf = async (p: TestPlatform, email: string) =>
  Number(
    (await p.ctx.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id,
  );

/** An answer's status and error code, to compare with `[404, 'team_not_found']`. */
export const codeOf = (answer: Answer) => [answer.status, answer.body?.code];

/** An answer's status and parsed body, to compare whole. */
export const statusAndBody = (answer: Answer) => ({ status: answer.status, body: answer.body });

/** An Error answer's status, code and message. */
export const errorOf = (answer: Answer) => [answer.status, answer.body?.code, answer.body?.message];

/** One row: who calls what, and what must come back. */
export interface ApiScenario<Actor extends string = string> {
  /** What the row shows; assertion messages start with it. */
  readonly name: string;
  /** The caller: a name from the actors given to runScenarios, or a client. */
  readonly as: Actor | Client;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The URL, or a function of the state set up by `before` (ids made just now). */
  readonly url: string | (() => string);
  readonly body?: unknown | (() => unknown);
  /** The status, or the statuses any of which is right. */
  readonly status: number | readonly number[];
  /** The Error body's `code`. */
  readonly code?: string;
  /** The Error body's `message`, exactly or by pattern. */
  readonly message?: string | RegExp;
  /** Fields the body must have, each deep-equal (others are not looked at). */
  readonly fields?: Record<string, unknown>;
  /** The whole body, deep-equal. */
  readonly equals?: unknown;
  /** Strings the raw answer must not contain (what a caller must not learn). */
  readonly hides?: readonly string[];
  readonly before?: () => unknown;
  /** More checks on the answer, after the row's own. */
  readonly after?: (answer: Answer) => unknown;
}

/**
 * A row in one line: `call` is "METHOD url", `expect` the status or "status error_code" (`'404
 * team_not_found'`), `more` the rest of the row (body, fields, hides…).
 */
export function scenario<Actor extends string>(
  name: string,
  as: Actor | Client,
  call: string,
  expect: number | `${number} ${string}`,
  more: Omit<Partial<ApiScenario<Actor>>, 'name' | 'as' | 'method' | 'url' | 'status' | 'code'> = {},
): ApiScenario<Actor> {
  const [method, url = ''] = call.split(' ');
  const [status, code] = String(expect).split(' ');
  return {
    name,
    as,
    method: method as ApiScenario['method'],
    url,
    status: Number(status),
    ...(code === undefined ? {} : { code }),
    ...more,
  };
}

/** Rows of one caller as tuples: [name, "METHOD url", expect, more?] (see scenario). */
export const scenarios = <Actor extends string>(
  as: Actor | Client,
  rows: readonly (readonly [
    string,
    string,
    Parameters<typeof scenario>[3],
    Parameters<typeof scenario>[4]?,
  ])[],
): ApiScenario<Actor>[] =>
  rows.map(([name, call, expect, more]) => scenario<Actor>(name, as, call, expect, more));

/**
 * Runs the rows in order (a row may depend on the ones above it), each as its actor, and checks
 * status, code, message, fields and body. Returns the answers by row name.
 */
export async function runScenarios<Actor extends string>(
  actors: Record<Actor, Client> | (() => Record<Actor, Client>),
  scenarios: readonly ApiScenario<Actor>[],
): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  for (const row of scenarios) {
    await row.before?.();
    const callers = typeof actors === 'function' ? actors() : actors;
    const caller = typeof row.as === 'function' ? row.as : callers[row.as];
    assert.ok(caller, `${row.name}: no actor ${String(row.as)}`);
    const url = typeof row.url === 'function' ? row.url() : row.url;
    const body = typeof row.body === 'function' ? (row.body as () => unknown)() : row.body;
    const answer = await caller(row.method, url, body);
    const what = `${row.name} (${row.method} ${url}): ${answer.status} ${answer.text}`;
    const statuses = typeof row.status === 'number' ? [row.status] : row.status;
    assert.ok(statuses.includes(answer.status), `${what}: expected status ${statuses.join(' or ')}`);
    if (row.code !== undefined) assert.equal(answer.body?.code, row.code, what);
    if (typeof row.message === 'string') assert.equal(answer.body?.message, row.message, what);
    else if (row.message) assert.match(String(answer.body?.message), row.message, what);
    for (const [field, value] of Object.entries(row.fields ?? {})) {
      assert.deepEqual(answer.body?.[field], value, `${what}: field ${field}`);
    }
    if ('equals' in row) assert.deepEqual(answer.body, row.equals, what);
    for (const secret of row.hides ?? []) {
      assert.ok(!answer.text.includes(secret), `${what}: leaked ${secret}`);
    }
    await row.after?.(answer);
    answers.set(row.name, answer);
  }
  return answers;
}

/** A platform on a fresh `dialect` database (settings by env names) and its app, ready for inject. */
export async function startAppPlatform(dialect: Dialect, env: Record<string, string> = {}) {
  const p: TestPlatform = await startPlatformContext(dialect, env);
  const app = buildPlatformApp(p.ctx);
  await app.ready();
  return { p, app };
}

/**
 * For a describe on a platform of its own: `suite.p` and `suite.app` (startAppPlatform) are made
 * before its tests and closed after them.
 */
export function appSuite(dialect: Dialect, env: Record<string, string> = {}) {
  const suite = {} as { p: TestPlatform; app: FastifyInstance };
  before(async () => {
    Object.assign(suite, await startAppPlatform(dialect, env));
  });
  after(async () => {
    await suite.app?.close();
    await suite.p?.close();
  });
  return suite;
}

/**
 * What most management-API tests start from: a platform on a fresh `dialect` database (settings
 * by env names), its app ready for inject, seedTeam's admin, owner and team (on `plan`), and the
 * owner as a caller with an API token.
 */
export async function startApiPlatform(
  dialect: Dialect,
  env: Record<string, string> = {},
  plan: Parameters<typeof seedTeam>[1] = 'pro',
) {
  const { p, app } = await startAppPlatform(dialect, env);
  const seeded = await seedTeam(p.ctx, plan);
  const ownerToken = (await createToken(p.ctx, seeded.owner, 'tests')).token;
  return {
    p,
    app,
    ...seeded,
    ownerToken,
    asOwner: bearerClient(app, ownerToken),
    async close() {
      await app.close();
      await p.close();
    },
  };
}

export type ApiPlatform = Awaited<ReturnType<typeof startApiPlatform>>;
