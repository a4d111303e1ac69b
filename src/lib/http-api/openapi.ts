import type { ErrorSpec } from '../api-error.ts';
import { implicitErrorCodes } from './common-errors.ts';
import type { AnyOperation, JsonSchema } from './operation.ts';
import { ref } from './schema-refs.ts';

export interface DocumentInfo {
  readonly title: string;
  readonly version: string;
  readonly description: string;
  /** The licence the document is published under (linters ask for one: `info.license`). */
  readonly license: { readonly name: string; readonly url: string };
}

/** Kennel's own licence (package.json), under which the documents its code builds are published. */
export const KENNEL_LICENSE = { name: 'MIT', url: 'https://opensource.org/license/mit' } as const;

export interface DocumentParts<Deps> {
  readonly info: DocumentInfo;
  readonly servers: readonly { url: string; description: string }[];
  readonly tags: readonly { name: string; description: string }[];
  readonly schemas: Readonly<Record<string, JsonSchema>>;
  readonly operations: readonly AnyOperation<Deps>[];
  readonly errors: Readonly<Record<string, ErrorSpec>>;
  readonly securitySchemes?: Readonly<Record<string, JsonSchema>>;
  /** The name of the error body schema in `schemas`. */
  readonly errorSchema: string;
}

/** Every catalog code an operation can answer with, its own and the implicit ones. */
export function errorCodesOf<Deps>(op: AnyOperation<Deps>): string[] {
  return [...new Set([...op.errors, ...implicitErrorCodes(op)])];
}

/**
 * Builds the OpenAPI 3.0.3 document from the same operation definitions the server registers.
 * Error answers are grouped by status; each lists its codes in its description and in
 * `x-error-codes`, with an example body of its first code.
 */
export function buildOpenApiDocument<Deps>(parts: DocumentParts<Deps>): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of parts.operations) {
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(op.responses)) {
      responses[status] = {
        description: spec.description,
        ...(spec.headers ? { headers: spec.headers } : {}),
        // An answer only in another media type (a text/event-stream) declares that alone.
        ...(spec.schema || spec.otherContent
          ? {
              content: {
                ...(spec.schema ? { 'application/json': { schema: spec.schema } } : {}),
                ...Object.fromEntries(
                  Object.entries(spec.otherContent ?? {}).map(([type, schema]) => [type, { schema }]),
                ),
              },
            }
          : {}),
      };
    }
    const byStatus = new Map<number, string[]>();
    for (const code of errorCodesOf(op)) {
      const spec = parts.errors[code];
      if (!spec) throw new Error(`${op.operationId} declares unknown error code ${code}`);
      byStatus.set(spec.status, [...(byStatus.get(spec.status) ?? []), code]);
    }
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      responses[String(status)] = {
        description: codes.map((c) => `\`${c}\`: ${parts.errors[c]?.meaning}`).join('\n\n'),
        'x-error-codes': codes,
        content: {
          'application/json': {
            schema: ref(parts.errorSchema),
            // This status's own first code: the Error schema's example names one code for all.
            example: { code: codes[0], message: parts.errors[codes[0] as string]?.meaning, status },
          },
        },
      };
    }
    const operation: Record<string, unknown> = {
      operationId: op.operationId,
      tags: op.tags,
      summary: op.summary,
      description: op.description,
      ...(op.deprecated ? { deprecated: true } : {}),
      ...(op.parameters?.length
        ? {
            parameters: op.parameters.map((p) => ({
              name: p.name,
              in: p.in,
              description: p.description,
              required: p.in === 'path' ? true : Boolean(p.required),
              schema: p.schema,
              ...(p.explode !== undefined ? { style: 'form', explode: p.explode } : {}),
            })),
          }
        : {}),
      ...(op.requestBody
        ? {
            requestBody: {
              description: op.requestBody.description,
              required: true,
              content: { 'application/json': { schema: op.requestBody.schema } },
            },
          }
        : {}),
      responses,
      ...(op.extensions ?? {}),
    };
    paths[op.path] ??= {};
    (paths[op.path] as Record<string, unknown>)[op.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.0.3',
    info: parts.info,
    servers: parts.servers,
    tags: parts.tags,
    paths,
    components: {
      schemas: parts.schemas,
      ...(parts.securitySchemes ? { securitySchemes: parts.securitySchemes } : {}),
    },
  };
}
