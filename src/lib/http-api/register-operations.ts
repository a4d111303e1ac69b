import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { RouteBodyLimit } from './error-handling.ts';
import { type AnyOperation, fastifyPath, type JsonSchema, type ParameterSpec } from './operation.ts';
import { inlineRefs } from './schema-refs.ts';

function objectSchema(parameters: readonly ParameterSpec[]): JsonSchema | undefined {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const p of parameters) {
    properties[p.name] = p.schema;
    if (p.required || p.in === 'path') required.push(p.name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

function fastifySchema<Deps>(op: AnyOperation<Deps>, components: Record<string, JsonSchema>): FastifySchema {
  const inline = (s: unknown) => inlineRefs(s, components) as JsonSchema;
  const params = op.parameters ?? [];
  const schema: FastifySchema = {};
  const path = objectSchema(params.filter((p) => p.in === 'path'));
  const query = objectSchema(params.filter((p) => p.in === 'query'));
  if (path) schema.params = inline(path);
  if (query) schema.querystring = inline(query);
  // Declared headers (If-Match…) are held to their documented schemas; the others pass.
  const headers = params.filter((p) => p.in === 'header');
  if (headers.length > 0) {
    schema.headers = inline({
      type: 'object',
      properties: Object.fromEntries(headers.map((p) => [p.name.toLowerCase(), p.schema])),
      required: headers.filter((p) => p.required).map((p) => p.name.toLowerCase()),
    });
  }
  if (op.requestBody) schema.body = inline(op.requestBody.schema);
  const response: Record<number, JsonSchema> = {};
  for (const [status, spec] of Object.entries(op.responses)) {
    if (spec.schema) response[Number(status)] = inline(spec.schema);
  }
  schema.response = response;
  return schema;
}

/** Registers each operation as a Fastify route with its schemas; handlers get `deps` passed in. */
export function registerOperations<Deps>(
  app: FastifyInstance,
  operations: readonly AnyOperation<Deps>[],
  components: Record<string, JsonSchema>,
  deps: Deps,
  /** Resolves (or refuses, by throwing) the caller before the handler runs. */
  authenticate?: (request: FastifyRequest, operation: AnyOperation<Deps>) => Promise<unknown>,
  /** Body limits of their own, by operationId, and the setting each comes from (named in the 413). */
  bodyLimits: Readonly<Record<string, RouteBodyLimit>> = {},
): void {
  for (const op of operations) {
    const input = (req: FastifyRequest, caller: unknown) => ({
      params: req.params,
      query: req.query,
      body: req.body,
      headers: req.headers,
      id: req.id,
      caller,
    });
    app.route({
      method: op.method,
      url: fastifyPath(op.path),
      schema: fastifySchema(op, components),
      config: { takesBody: op.requestBody !== undefined, bodyLimit: bodyLimits[op.operationId] },
      ...(bodyLimits[op.operationId] && { bodyLimit: bodyLimits[op.operationId]?.bytes }),
      handler: authenticate
        ? async (req: FastifyRequest, reply: FastifyReply) =>
            op.handler(input(req, await authenticate(req, op)), reply, deps)
        : (req: FastifyRequest, reply: FastifyReply) => op.handler(input(req, undefined), reply, deps),
    });
  }
}
