import type { FastifyReply } from 'fastify';
import { type JsonSchema, ref } from '../../../lib/http-api/index.ts';
import type { Actor, PlatformContext } from '../../context.ts';
import { actorOf } from '../auth.ts';

/**
 * What the management API's routes answer, each shape declared once: the responses they document
 * (`ok`, `created`, `noContent`) and the handlers most of them are (`forCaller`, `inProject`,
 * `inTeam`, `thenNoContent`, `answerCreated`). The handlers keep the types the operation gives
 * them (src/platform/api/operation.ts).
 */

/** The schema named `name`, or (`[name]`) a list of them. */
const schemaOf = (name: string | readonly [string]): JsonSchema =>
  typeof name === 'string' ? ref(name) : { type: 'array', items: ref(name[0]) };

/** 200 with a body of the schema `name` (`[name]`: a list of them). */
export const ok = (description: string, name: string | readonly [string]) => ({
  200: { description, schema: schemaOf(name) },
});

/** 201 with the schema `name`: what was made. */
export const created = (description: string, name: string) => ({ 201: { description, schema: ref(name) } });

/** 204: done, nothing to send back. */
export const noContent = (description: string) => ({ 204: { description } });

interface Asked {
  readonly caller: unknown;
}

/** A handler answering what `read` finds for the caller. */
export const forCaller =
  <A>(read: (ctx: PlatformContext, actor: Actor) => Promise<A>) =>
  ({ caller }: Asked, _reply: FastifyReply, ctx: PlatformContext) =>
    read(ctx, actorOf(caller));

/** The path parameters a handler may be asked for by: a project's slug, a team's id. */
interface PathIds {
  slug: string;
  teamId: number;
}

/** A handler answering what `read` finds for the caller at the path's `key` (a project, a team). */
const inPath =
  <K extends keyof PathIds>(key: K) =>
  <A>(read: (ctx: PlatformContext, actor: Actor, id: PathIds[K]) => Promise<A>) =>
  (
    { caller, params }: Asked & { readonly params: Pick<PathIds, K> },
    _reply: FastifyReply,
    ctx: PlatformContext,
  ) =>
    read(ctx, actorOf(caller), params[key]);

/** A handler answering what `read` finds for the caller in the project of the path's `slug`. */
export const inProject = inPath('slug');

/** A handler answering what `read` finds for the caller in the team of the path's `teamId`. */
export const inTeam = inPath('teamId');

/** A handler that does `act` (a removal, a revocation), then answers 204. */
export const thenNoContent =
  <R>(act: (request: R, ctx: PlatformContext) => Promise<unknown>) =>
  async (request: R, reply: FastifyReply, ctx: PlatformContext) => {
    await act(request, ctx);
    return reply.code(204).send();
  };

/** A handler answering 201 with what `create` made. */
export const answerCreated =
  <R, A>(create: (request: R, ctx: PlatformContext, reply: FastifyReply) => Promise<A>) =>
  (request: R, reply: FastifyReply, ctx: PlatformContext) => {
    reply.code(201);
    return create(request, ctx, reply);
  };
