import type { FastifyReply } from 'fastify';

/** A JSON Schema in the OpenAPI 3.0 dialect (`nullable`, `example`, `x-` extensions allowed). */
export type JsonSchema = Record<string, unknown>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ParameterSpec {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly description: string;
  readonly required?: boolean;
  readonly schema: JsonSchema;
  /** For repeatable query parameters (`?id=1&id=2`). */
  readonly explode?: boolean;
}

export interface HeaderSpec {
  readonly description: string;
  readonly schema: JsonSchema;
}

export interface ResponseSpec {
  readonly description: string;
  readonly schema?: JsonSchema;
  /**
   * Other media types the same answer comes in besides JSON (`application/yaml`), by schema. The
   * handler sends those as text, with their content type. Without `schema`, the answer comes in
   * these alone (a `text/event-stream`).
   */
  readonly otherContent?: Readonly<Record<string, JsonSchema>>;
  readonly headers?: Readonly<Record<string, HeaderSpec>>;
}

export interface OperationRequest<P, Q, B> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The request id, also sent back as `X-Request-Id`. */
  readonly id: string;
  /** Who is asking, as the service's authenticate hook resolved it (undefined without one). */
  readonly caller: unknown;
}

/**
 * One HTTP operation: its contract (what the OpenAPI document says) and its handler, in one
 * place, so the document and the server cannot drift. The same schemas validate requests,
 * serialize responses and describe the operation.
 */
export interface Operation<Deps, P = unknown, Q = unknown, B = unknown, A = unknown> {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** OpenAPI path template, e.g. `/pets/{petId}`. */
  readonly path: string;
  readonly tags: readonly string[];
  readonly summary: string;
  readonly description: string;
  readonly deprecated?: boolean;
  /**
   * Who may call it, in the service's terms (e.g. `public`, `user`, `admin`); the service's
   * authenticate hook enforces it and the document declares it.
   */
  readonly access?: string;
  /** Vendor extensions copied onto the operation (`x-sunset`, `x-hideTryItPanel`…). */
  readonly extensions?: Readonly<Record<`x-${string}`, unknown>>;
  readonly parameters?: readonly ParameterSpec[];
  readonly requestBody?: { readonly description: string; readonly schema: JsonSchema };
  /** Success responses by status. */
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /** Catalog codes this operation can answer with, besides the ones every operation can. */
  readonly errors: readonly string[];
  /** Resolves to the answer's body (`A`), or to the reply when it sent the answer itself (a 204). */
  readonly handler: (
    request: OperationRequest<P, Q, B>,
    reply: FastifyReply,
    deps: Deps,
  ) => Promise<Answerable<A> | FastifyReply>;
}

/**
 * What a handler may resolve to for the answer `A`: that shape, its arrays and objects possibly
 * read-only (the serializer only reads them).
 */
export type Answerable<A> = A extends readonly (infer T)[]
  ? readonly Answerable<T>[]
  : A extends object
    ? { readonly [K in keyof A]: Answerable<A[K]> }
    : A;

/** Identity function that keeps the handler's input types next to the contract. */
export function defineOperation<Deps, P = Record<string, never>, Q = Record<string, never>, B = undefined>(
  operation: Operation<Deps, P, Q, B>,
): Operation<Deps, P, Q, B> {
  return operation;
}

/** One operation's types, as a type provider derives them from its schemas. */
export interface OperationTypes {
  readonly params: unknown;
  readonly query: unknown;
  readonly body: unknown;
  /** The success body; `undefined` for an answer without one (a 204). */
  readonly answer: unknown;
}

/**
 * `defineOperation` bound to a map of operation types by operationId, generated from the
 * service's schemas (Fastify's type-provider idea): the handler's params, query and body, and what
 * it may answer, come from `Types[operationId]`, so a handler answering the wrong shape fails to
 * compile and no route writes its types by hand.
 */
export function typedOperations<Deps, Types extends { [Id in keyof Types]: OperationTypes }>() {
  return <Id extends keyof Types & string>(
    operation: Operation<
      Deps,
      Types[Id]['params'],
      Types[Id]['query'],
      Types[Id]['body'],
      Types[Id]['answer']
    > & { readonly operationId: Id },
  ): Operation<Deps, Types[Id]['params'], Types[Id]['query'], Types[Id]['body'], Types[Id]['answer']> =>
    operation;
}

// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of operations
export type AnyOperation<Deps> = Operation<Deps, any, any, any, any>;

export function fastifyPath(openApiPath: string): string {
  return openApiPath.replaceAll(/\{([^}]+)\}/g, ':$1');
}
