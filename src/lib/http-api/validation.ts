import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from './operation.ts';

/**
 * Request validation: the two Ajvs (JSON bodies as sent; path, query and header text coerced from
 * plain decimals only), the U+0000 check both databases need, and the 400/422 messages that say
 * which field is wrong and how.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** The ajv keyword of a string holding U+0000, which the error handler answers 422. */
export const NUL_KEYWORD = 'nulCharacter';

/**
 * Two validators: bodies are JSON and must have the right types as sent ("5" is not a number);
 * path, query and header values are text and are coerced to the declared types, but only from
 * plain decimals (Number() would read `0x3`, `3e0`, `+1`, `1.0` and `` as numbers). Any string
 * holding U+0000 is refused: PostgreSQL cannot store it in text while SQLite can, and the two
 * databases must answer alike.
 */
export function validatorCompiler(): (route: {
  schema: JsonSchema;
  httpPart?: string;
}) => (data: unknown) => boolean {
  const make = (coerce: boolean) =>
    addFormats(
      new Ajv({
        coerceTypes: coerce ? 'array' : false,
        useDefaults: true,
        removeAdditional: false,
        allErrors: false,
        strict: false,
      }),
    );
  const strictAjv = make(false);
  const coercingAjv = make(true);
  return ({ schema, httpPart }) => {
    const text = httpPart !== 'body';
    const validate = (text ? coercingAjv : strictAjv).compile(schema);
    const numeric = text ? numericFields(schema) : [];
    // U+0000 is looked for once the value is otherwise valid, so a wrong type or an unknown
    // field is still the 400 it would be without it.
    const checked = (data: unknown): boolean => {
      const refused = numeric.length > 0 ? notDecimal(data, numeric) : undefined;
      const valid = refused === undefined && validate(data);
      const nul = valid ? nulIn(data, '') : undefined;
      checked.errors = refused ? [refused] : nul ? [nul] : validate.errors;
      return valid && nul === undefined;
    };
    checked.errors = null as Partial<ErrorObject>[] | null | undefined;
    return checked;
  };
}

/** Properties of a text part (path, query, headers) declared integer or number, or arrays of them. */
function numericFields(schema: JsonSchema): [string, 'integer' | 'number'][] {
  const fields: [string, 'integer' | 'number'][] = [];
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const type = property.type === 'array' ? (property.items as JsonSchema | undefined)?.type : property.type;
    if (type === 'integer' || type === 'number') fields.push([name, type]);
  }
  return fields;
}

const DECIMAL = { integer: /^(0|-?[1-9][0-9]*)$/, number: /^(0|-?[1-9][0-9]*)(\.[0-9]+)?$/ };

/** The first value sent for a numeric field that is not a plain decimal, as an ajv error. */
function notDecimal(
  data: unknown,
  fields: [string, 'integer' | 'number'][],
): Partial<ErrorObject> | undefined {
  const values = data as Record<string, unknown>;
  for (const [name, type] of fields) {
    const value = values[name];
    for (const raw of Array.isArray(value) ? value : [value]) {
      if (typeof raw !== 'string') continue;
      if (!DECIMAL[type].test(raw)) {
        return {
          keyword: 'type',
          instancePath: `/${name}`,
          message: `must be ${type}, written in plain decimal digits such as 42 (not ${JSON.stringify(raw.slice(0, 40))})`,
          params: {},
        };
      }
      if (type === 'integer' && !Number.isSafeInteger(Number(raw))) {
        return {
          keyword: 'maximum',
          instancePath: `/${name}`,
          message: `must be <= ${Number.MAX_SAFE_INTEGER}`,
          params: {},
        };
      }
    }
  }
  return undefined;
}

/** Where the first string holding U+0000 is (keys included), as an ajv error. */
function nulIn(value: unknown, path: string): Partial<ErrorObject> | undefined {
  if (typeof value === 'string') {
    return value.includes('\u0000') ? { keyword: NUL_KEYWORD, instancePath: path, params: {} } : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulIn(value[i], `${path}/${i}`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return { keyword: NUL_KEYWORD, instancePath: path, params: {} };
    const found = nulIn(item, `${path}/${key}`);
    if (found) return found;
  }
  return undefined;
}

const PART_NAMES: Record<string, string> = {
  body: 'body',
  params: 'path parameter',
  querystring: 'query parameter',
  headers: 'header',
};

/** The request part a validation error is about, and the field in words (`field body.tags.0`). */
function placeOf(instancePath: string | undefined, context: string | undefined) {
  const part = PART_NAMES[context ?? 'body'] ?? context ?? 'request';
  const where = (instancePath ?? '').replaceAll('/', '.').replace(/^\./, '');
  return { part, field: where ? (part === 'body' ? `field body.${where}` : `${part} ${where}`) : part };
}

/** The invalid_character message: where the U+0000 is. */
export function nulMessage(error: Partial<ErrorObject>, context: string | undefined): string {
  const { field } = placeOf(error.instancePath, context);
  return `The ${field} contains the character U+0000 (NUL), which no text field can hold. Remove it.`;
}

/** The validation_failed message: the first problem, and what to do about it. */
export function validationMessage(errors: Partial<ErrorObject>[], context: string | undefined): string {
  const first = errors[0];
  const { part, field } = placeOf(first?.instancePath, context);
  if (!first) return `The ${part} is not valid. Fix the request and send it again.`;
  const params = (first.params ?? {}) as Record<string, unknown>;
  let problem: string;
  switch (first.keyword) {
    case 'additionalProperties':
      problem = `${field === part ? `the ${part}` : field} has an unknown field "${String(params.additionalProperty)}"; remove it`;
      break;
    case 'required':
      problem = `${field === part ? `the ${part}` : field} is missing the required field "${String(params.missingProperty)}"`;
      break;
    case 'enum':
      problem = `${field} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
      break;
    default:
      problem = `${field} ${first.message ?? 'is not valid'}`;
  }
  return `${problem.charAt(0).toUpperCase()}${problem.slice(1)}. Fix the request and send it again.`;
}
