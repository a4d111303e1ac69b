/**
 * Writes src/platform/api-types.ts: the management API's types, generated from the OpenAPI document
 * the platform serves at /api/v1/openapi.json (built here without a server, by
 * `managementDocument()`): every component schema as an interface, and `Operations`, each
 * operation's path parameters, query, body and answer by operationId. The server's routes take
 * their handlers' types from `Operations` (src/platform/api/operation.ts), the CLI and the
 * dashboard read the schemas' types: one API shape, written once, in the schema.
 *
 *   npm run generate:api-types            rewrite the file
 *   npm run generate:api-types -- --check exit 1 when the file differs from what would be written
 *
 * Our own generator rather than openapi-typescript: that needs TypeScript 5's compiler API, which
 * the TypeScript 7 this project builds with no longer has (docs/decisions/cli.md). The schemas use a
 * small part of OpenAPI 3.0 (objects, arrays, enums, nullable, allOf, $ref), and anything else
 * stops the generator instead of being typed loosely.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { managementDocument } from '../src/platform/api/app.ts';

export const API_TYPES_FILE = join(import.meta.dirname, '..', 'src', 'platform', 'api-types.ts');

interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  $ref?: string;
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  enum?: (string | number | null)[];
  nullable?: boolean;
  description?: string;
}

/** What a schema may say that changes no type (validation, docs): everything else is refused. */
const IGNORED = new Set([
  'description',
  'pattern',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'format',
  'example',
]);
const UNDERSTOOD = new Set([
  ...IGNORED,
  'type',
  '$ref',
  'allOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'nullable',
  'default',
]);

const REF = /^#\/components\/schemas\/([A-Za-z][\w]*)$/;

function refName(ref: string): string {
  const name = REF.exec(ref)?.[1];
  if (!name) throw new Error(`unsupported $ref ${ref}`);
  return name;
}

function comment(text: string | undefined, indent: string): string {
  return text ? `${indent}/** ${text.replaceAll('*/', '*\\/').replaceAll('\n', ' ')} */\n` : '';
}

/** Whether `a | b` or `a & b` appears outside any braces (then `[]` needs parentheses). */
function topLevelUnion(type: string): boolean {
  let depth = 0;
  for (const c of type) {
    if (c === '{' || c === '(' || c === '<') depth++;
    else if (c === '}' || c === ')' || c === '>') depth--;
    else if (depth === 0 && (c === '|' || c === '&')) return true;
  }
  return false;
}

function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : `'${name}'`;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}

interface Content {
  content?: Record<string, { schema: Schema }>;
}

interface DocumentOperation {
  operationId: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: Content;
  responses: Record<string, Content>;
}

interface Document {
  paths?: Record<string, Record<string, DocumentOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

class Generator {
  readonly #schemas: Readonly<Record<string, Schema>>;

  constructor(schemas: Readonly<Record<string, Schema>>) {
    this.#schemas = schemas;
  }

  /** Every schema, in the document's order, then `Operations`. */
  file(paths: Readonly<Record<string, Record<string, DocumentOperation>>>): string {
    const declarations = Object.keys(this.#schemas).map((name) => this.#declaration(name));
    return `${HEADER}\n${declarations.join('\n')}\n${this.#operations(paths)}`;
  }

  #want(name: string): string {
    if (!this.#schemas[name]) throw new Error(`the document has no schema ${name}`);
    return name;
  }

  #declaration(name: string): string {
    const schema = this.#schemas[name] ?? {};
    this.#check(schema, name);
    const doc = comment(schema.description, '');
    const [base, ...rest] = schema.allOf ?? [];
    if (base?.$ref && rest.length === 1 && rest[0]?.type === 'object') {
      return `${doc}export interface ${name} extends ${this.#want(refName(base.$ref))} ${this.#members(rest[0], '')}\n`;
    }
    if (schema.type === 'object' && schema.properties) {
      return `${doc}export interface ${name} ${this.#members(schema, '')}\n`;
    }
    return `${doc}export type ${name} = ${this.#type(schema, '')};\n`;
  }

  /**
   * `Operations`: by operationId, the `OperationTypes` of each operation, one a line (biome's
   * layout: arguments one a line when they do not fit in 110 characters).
   */
  #operations(paths: Readonly<Record<string, Record<string, DocumentOperation>>>): string {
    const entries: string[] = [];
    for (const [path, methods] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const parameters = op.parameters ?? [];
        const inputs = (where: 'path' | 'query') => {
          const list = parameters.filter((p) => p.in === where);
          if (list.length === 0) return 'NoInput';
          const members = list.map(
            (p) => `${key(p.name)}${p.in === 'path' || p.required ? '' : '?'}: ${this.#type(p.schema, '')}`,
          );
          return `{ ${members.join('; ')} }`;
        };
        const bodySchema = op.requestBody?.content?.['application/json']?.schema;
        const answers = new Set<string>();
        for (const [status, response] of Object.entries(op.responses)) {
          if (!/^2\d\d$/.test(status)) continue;
          const { 'application/json': json, ...others } = response.content ?? {};
          answers.add(json ? this.#type(json.schema, '') : 'undefined');
          for (const other of Object.values(others)) answers.add(this.#type(other.schema, ''));
        }
        const types = [
          inputs('path'),
          inputs('query'),
          bodySchema ? this.#type(bodySchema, '') : 'undefined',
          [...answers].join(' | ') || 'undefined',
        ];
        const line = `  ${key(op.operationId)}: OperationTypes<${types.join(', ')}>;`;
        const entry =
          line.length <= 110 && !line.includes('\n')
            ? line
            : `  ${key(op.operationId)}: OperationTypes<\n${types.map((t) => `    ${t}`).join(',\n')}\n  >;`;
        entries.push(`${comment(`${method.toUpperCase()} ${path}: ${op.summary ?? ''}`, '  ')}${entry}`);
      }
    }
    return `${OPERATION_TYPES}\n/** What each operation takes and answers, by operationId: its handler's types. */\nexport interface Operations {\n${entries.join('\n')}\n}\n`;
  }

  /** `{ … }` with one member a line, indented from `indent`. */
  #members(schema: Schema, indent: string): string {
    const inner = `${indent}  `;
    const required = new Set(schema.required ?? []);
    const lines = Object.entries(schema.properties ?? {}).map(([name, property]) => {
      this.#check(property, name);
      const optional = required.has(name) ? '' : '?';
      return `${comment(property.description, inner)}${inner}${key(name)}${optional}: ${this.#type(property, inner)};`;
    });
    return `{\n${lines.join('\n')}\n${indent}}`;
  }

  #type(schema: Schema, indent: string): string {
    this.#check(schema, 'a property');
    const nullable = schema.nullable === true || schema.enum?.includes(null) === true;
    const base = this.#nonNull(schema, indent);
    return nullable && base !== 'unknown' ? `${base} | null` : base;
  }

  #nonNull(schema: Schema, indent: string): string {
    if (schema.$ref) return this.#want(refName(schema.$ref));
    if (schema.allOf) return schema.allOf.map((part) => this.#nonNull(part, indent)).join(' & ');
    if (schema.enum) {
      const values = schema.enum
        .filter((v) => v !== null)
        .map((v) => (typeof v === 'string' ? `'${v}'` : `${v}`));
      return values.join(' | ');
    }
    switch (schema.type) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'array': {
        const items = this.#type(schema.items ?? {}, indent);
        return topLevelUnion(items) ? `(${items})[]` : `${items}[]`;
      }
      case 'object':
        if (schema.properties) return this.#members(schema, indent);
        if (typeof schema.additionalProperties === 'object') {
          return `Record<string, ${this.#type(schema.additionalProperties, indent)}>`;
        }
        return 'Record<string, unknown>';
      default:
        throw new Error(`a schema without a type the generator knows: ${JSON.stringify(schema)}`);
    }
  }

  #check(schema: Schema, where: string): void {
    const unknown = Object.keys(schema).filter((k) => !UNDERSTOOD.has(k));
    if (unknown.length > 0) throw new Error(`${where}: the generator does not handle ${unknown.join(', ')}`);
  }
}

const HEADER = `/**
 * The management API's types: its schemas, and each operation's inputs and answer. GENERATED by
 * \`npm run generate:api-types\` (scripts/generate-api-types.ts) from its OpenAPI document,
 * /api/v1/openapi.json: do not edit; change the schema (src/platform/api/schemas.ts) or the
 * operation and regenerate. test/cli/api-types.test.ts fails when this file has drifted.
 *
 * Types only, and importing nothing: the server's routes take their handlers' types from
 * \`Operations\` (src/platform/api/operation.ts); the CLI (which talks to the platform over HTTP,
 * maybe another version of it) and the dashboard (src/web/dashboard/public/types.js) read the
 * schemas' types.
 */
`;

const OPERATION_TYPES = `/**
 * One operation's types: its path parameters, its query, its JSON body (\`undefined\` without one)
 * and its answer: the 2xx JSON bodies' types, \`undefined\` for an answer without one (a 204, sent
 * by the handler itself), and \`string\` for one also (or only) sent in another media type, as text.
 */
export interface OperationTypes<Params, Query, Body, Answer> {
  params: Params;
  query: Query;
  body: Body;
  answer: Answer;
}

/** No path parameters, or no query. */
export type NoInput = Record<string, never>;
`;

/** The file's text, from the document the platform would serve now. */
export function generateApiTypes(): string {
  const document = managementDocument() as Document;
  return new Generator(document.components?.schemas ?? {}).file(document.paths ?? {});
}

/**
 * Where `current` (the file's text) differs from what would be generated now, as
 * "line N: expected … / found …", or undefined when it is up to date.
 */
export function apiTypesDrift(current: string, generated = generateApiTypes()): string | undefined {
  if (current === generated) return undefined;
  const want = generated.split('\n');
  const have = current.split('\n');
  const line = want.findIndex((text, i) => have[i] !== text);
  const at = line === -1 ? want.length : line;
  return `line ${at + 1}: expected ${JSON.stringify(want[at] ?? '(end of file)')}, found ${JSON.stringify(have[at] ?? '(end of file)')}`;
}

if (import.meta.main) {
  const text = generateApiTypes();
  if (process.argv.includes('--check')) {
    const drift = apiTypesDrift(readFileSync(API_TYPES_FILE, 'utf8'), text);
    if (drift) {
      process.stderr.write(
        `src/platform/api-types.ts has drifted (${drift}): run npm run generate:api-types\n`,
      );
      process.exit(1);
    }
  } else {
    writeFileSync(API_TYPES_FILE, text);
    process.stdout.write(`wrote ${API_TYPES_FILE}\n`);
  }
}
