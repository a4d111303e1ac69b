/**
 * Writes src/cli/api-types.ts: TypeScript interfaces for the management API's schemas that the
 * CLI reads, generated from the OpenAPI document the platform serves at /api/v1/openapi.json
 * (built here without a server, by `managementDocument()`).
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

export const API_TYPES_FILE = join(import.meta.dirname, '..', 'src', 'cli', 'api-types.ts');

/** The schemas the CLI reads, in the order the file declares them (their $refs come along). */
export const CLI_SCHEMAS = [
  'Session',
  'Me',
  'Token',
  'CreatedToken',
  'Team',
  'TeamMember',
  'Invitation',
  'CreatedInvitation',
  'AcceptedInvitation',
  'PasswordResetLink',
  'OriginGrant',
  'Project',
  'ProjectDeletion',
  'Change',
  'Deploy',
  'DeployCheck',
  'Publication',
  'Promotion',
  'DeployComparison',
  'DnsRecord',
  'Domain',
  'DnsOutcome',
  'AddedDomain',
  'CheckResult',
  'DomainEvent',
  'DomainDetail',
  'ApplyResult',
  'WebhookEndpoint',
  'WebhookEndpointSet',
  'WebhookDelivery',
  'ProjectTraffic',
  'RequestLog',
  'RequestLogPage',
  'DeprecationReach',
] as const;

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
const IGNORED = new Set(['description', 'pattern', 'minimum', 'maximum', 'minLength', 'maxLength', 'format']);
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

class Generator {
  readonly #schemas: Readonly<Record<string, Schema>>;
  /** Names declared or queued, in order. */
  readonly #queue: string[] = [];

  constructor(schemas: Readonly<Record<string, Schema>>) {
    this.#schemas = schemas;
  }

  file(names: readonly string[]): string {
    for (const name of names) this.#want(name);
    const declarations: string[] = [];
    for (let i = 0; i < this.#queue.length; i++) {
      const name = this.#queue[i] ?? '';
      declarations.push(this.#declaration(name));
    }
    return `${HEADER}\n${declarations.join('\n')}`;
  }

  #want(name: string): string {
    if (!this.#schemas[name]) throw new Error(`the document has no schema ${name}`);
    if (!this.#queue.includes(name)) this.#queue.push(name);
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
 * The management API's bodies as the CLI reads them. GENERATED by \`npm run generate:api-types\`
 * (scripts/generate-api-types.ts) from the schemas of its OpenAPI document, /api/v1/openapi.json:
 * do not edit; regenerate. test/cli/api-types.test.ts fails when this file has drifted. Types
 * only: the CLI talks to the platform over HTTP and may run against another version of it.
 */
`;

/** The file's text, from the document the platform would serve now. */
export function generateApiTypes(): string {
  const document = managementDocument() as { components?: { schemas?: Record<string, Schema> } };
  return new Generator(document.components?.schemas ?? {}).file(CLI_SCHEMAS);
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
      process.stderr.write(`src/cli/api-types.ts has drifted (${drift}): run npm run generate:api-types\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(API_TYPES_FILE, text);
    process.stdout.write(`wrote ${API_TYPES_FILE}\n`);
  }
}
