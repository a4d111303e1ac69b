import type { FastifyReply } from 'fastify';
import type { Actor, PlatformContext } from '../../context.ts';
import { actorOf } from '../auth.ts';
import type { PathIds } from './contract.ts';

/**
 * The handlers most of the management API's routes are, each shape declared once: `passing` (and
 * its `forCaller`, `inProject`, `inTeam`), `answering`, `answerCreated`, `thenNoContent`. They keep
 * the types the operation gives them (src/platform/api/operation.ts); what the routes declare is
 * in contract.ts.
 */

interface Asked {
  readonly caller: unknown;
}

type Handler<R, A> = (request: R, reply: FastifyReply, ctx: PlatformContext) => Promise<A>;

/**
 * What a handler may pass on from the request: a path parameter, the body, one field of the body
 * (`body.name`) or the query.
 */
type Part = keyof PathIds | 'body' | `body.${string}` | 'query';

/** The arguments `parts` name: a path parameter's type; the rest as `act` takes them. */
type ArgsOf<K extends readonly Part[]> = {
  [I in keyof K]: K[I] extends keyof PathIds ? PathIds[K[I]] : unknown;
};

/** The argument `act` takes at the place of `P` in `K`. */
type ArgAt<K extends readonly Part[], Args extends readonly unknown[], P extends Part> = Args[Extract<
  { [I in keyof K]: K[I] extends P ? I : never }[number],
  keyof Args
>];

/** The body fields `K` names (`name` for `body.name`). */
type FieldsOf<K extends readonly Part[]> = K[number] extends infer P
  ? P extends `body.${infer F}`
    ? F
    : never
  : never;

/** The request a handler passing `K` on to an `act` taking `Args` needs. */
type RequestFor<K extends readonly Part[], Args extends readonly unknown[]> = Asked & {
  readonly params: Pick<PathIds, Extract<K[number], keyof PathIds>>;
} & { readonly [P in Extract<K[number], 'body' | 'query'>]: ArgAt<K, Args, P> } & BodyWith<K, Args>;

/** A body with the fields `K` names, when it names any. */
type BodyWith<K extends readonly Part[], Args extends readonly unknown[]> = [FieldsOf<K>] extends [never]
  ? unknown
  : { readonly body: { readonly [F in FieldsOf<K>]: ArgAt<K, Args, `body.${F}`> } };

/** A request as `passing` reads it, once its types have been checked (RequestFor). */
interface Received extends Asked {
  readonly params: Readonly<Record<string, unknown>>;
  readonly body?: Readonly<Record<string, unknown>>;
  readonly query?: unknown;
}

/** The value `part` names in the request. */
function partOf(request: Received, part: Part): unknown {
  if (part === 'body' || part === 'query') return request[part];
  if (part.startsWith('body.')) return request.body?.[part.slice('body.'.length)];
  return request.params[part];
}

/**
 * A handler answering what `act` does for the caller with the request's `parts`, in that order:
 * most routes are one call into the domain.
 */
export const passing =
  <const K extends readonly Part[]>(...parts: K) =>
  <Args extends ArgsOf<K>, A>(act: (ctx: PlatformContext, actor: Actor, ...args: Args) => Promise<A>) =>
  (request: RequestFor<K, Args>, _reply: FastifyReply, ctx: PlatformContext) => {
    const args = parts.map((part) => partOf(request as Received, part));
    // The values `parts` name, in their order: what ArgsOf<K> types.
    return act(ctx, actorOf(request.caller), ...(args as unknown as Args));
  };

/** A handler answering what `act` finds for the caller. */
export const forCaller = passing();

/** A handler answering what `act` finds for the caller in the project of the path's `slug`. */
export const inProject = passing('slug');

/** A handler answering what `act` finds for the caller in the team of the path's `teamId`. */
export const inTeam = passing('teamId');

/** A handler answering `status` (202: queued) with what `handler` answers. */
export const answering =
  <R, A>(status: number, handler: Handler<R, A>) =>
  (request: R, reply: FastifyReply, ctx: PlatformContext) => {
    reply.code(status);
    return handler(request, reply, ctx);
  };

/** A handler answering 201 with what `handler` made. */
export const answerCreated = <R, A>(handler: Handler<R, A>) => answering(201, handler);

/** A handler that does what `handler` does (a removal, a revocation), then answers 204. */
export const thenNoContent =
  <R>(handler: Handler<R, unknown>) =>
  async (request: R, reply: FastifyReply, ctx: PlatformContext) => {
    await handler(request, reply, ctx);
    return reply.code(204).send();
  };
