/**
 * The request Swagger UI's "Test it" sends for an operation when the reader changes nothing: each
 * parameter filled with its `example`, else its schema's `example`, else its schema's `default`
 * (Swagger UI's ParameterRow), and the body from the media type's `example`, else a sample built
 * from the schema's property examples (its getSampleSchema). Empty parameters are not sent.
 */

type Schema = Record<string, unknown>;
type Document = {
  paths: Record<string, Record<string, Schema>>;
  components?: { schemas?: Record<string, Schema> };
};

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  example?: unknown;
  schema?: Schema;
}

export interface ExampleRequest {
  readonly operationId: string;
  readonly method: string;
  /** The path under the API's base, parameters filled in, with the query string. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: unknown;
  /** The operation declares a security requirement: the reader has to authorize first. */
  readonly needsKey: boolean;
  /** Required parameters the document gives no value for (the reader would have to type one). */
  readonly missing: string[];
}

function resolve(document: Document, schema: Schema | undefined): Schema {
  const target = schema?.$ref;
  if (typeof target !== 'string') return schema ?? {};
  const name = target.replace('#/components/schemas/', '');
  const found = document.components?.schemas?.[name];
  if (!found) throw new Error(`unresolvable ${target}`);
  return resolve(document, found);
}

/** Swagger UI's sample of a schema, for what this project's documents use. */
export function sampleOf(document: Document, schema: Schema | undefined): unknown {
  const s = resolve(document, schema);
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.type === 'object' || s.properties) {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    return Object.fromEntries(
      Object.entries(properties)
        .filter(([, p]) => resolve(document, p).readOnly !== true)
        .map(([name, p]) => [name, sampleOf(document, p)]),
    );
  }
  if (s.type === 'array') return [sampleOf(document, s.items as Schema)];
  if (s.type === 'integer' || s.type === 'number') return 0;
  if (s.type === 'boolean') return true;
  if (s.type === 'string') return 'string';
  throw new Error(`no sample for ${JSON.stringify(s)}`);
}

function operationById(document: Document, operationId: string): [string, string, Schema] {
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, op] of Object.entries(item))
      if (op && typeof op === 'object' && op.operationId === operationId) return [path, method, op];
  throw new Error(`the document has no operation ${operationId}`);
}

export function exampleRequest(document: Document, operationId: string): ExampleRequest {
  const [template, method, op] = operationById(document, operationId);
  const missing: string[] = [];
  const headers: Record<string, string> = {};
  const query = new URLSearchParams();
  let path = template;
  for (const parameter of (op.parameters ?? []) as Parameter[]) {
    const schema = resolve(document, parameter.schema);
    const value = parameter.example ?? schema.example ?? schema.default;
    if (value === undefined || value === '') {
      if (parameter.required) missing.push(`${parameter.in} ${parameter.name}`);
      continue;
    }
    if (parameter.in === 'path')
      path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
    else if (parameter.in === 'query')
      for (const each of Array.isArray(value) ? value : [value]) query.append(parameter.name, String(each));
    else if (parameter.in === 'header') headers[parameter.name.toLowerCase()] = String(value);
  }
  const media = (op.requestBody as { content?: Record<string, Schema> } | undefined)?.content?.[
    'application/json'
  ];
  const body = media ? (media.example ?? sampleOf(document, media.schema as Schema)) : undefined;
  const security = op.security as unknown[] | undefined;
  return {
    operationId,
    method: method.toUpperCase(),
    path: query.size > 0 ? `${path}?${query}` : path,
    headers,
    ...(media ? { body } : {}),
    needsKey: Array.isArray(security) && security.length > 0,
    missing,
  };
}

/** Every operationId of a document, in document order. */
export function operationIds(document: Document): string[] {
  return Object.values(document.paths).flatMap((item) =>
    Object.values(item)
      .filter((op) => op && typeof op === 'object' && typeof op.operationId === 'string')
      .map((op) => op.operationId as string),
  );
}
