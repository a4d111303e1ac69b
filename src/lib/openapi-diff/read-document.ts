/**
 * Reads an OpenAPI document from JSON or YAML text for comparison, offline (`kennel diff`): parsed,
 * and checked against its version's OpenAPI schema so that comparing something that is not an
 * OpenAPI 3.0/3.1 document says what is wrong instead of reporting nonsense. The platform's deploy
 * reader (src/platform/projects/deploys.ts) goes further (lines and columns, references, limits).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';

export type ReadResult =
  | { readonly document: Record<string, unknown>; readonly problems?: undefined }
  | { readonly document?: undefined; readonly problems: readonly string[] };

const MAX_PROBLEMS = 20;
const validators = new Map<string, ValidateFunction>();

function validatorFor(version: '3.0' | '3.1'): ValidateFunction {
  let validate = validators.get(version);
  if (validate === undefined) {
    const validator = new Validator({ allErrors: true }) as unknown as {
      getAjvValidator(version: string): ValidateFunction;
    };
    validate = validator.getAjvValidator(version);
    validators.set(version, validate);
  }
  return validate;
}

/** Errors of the alternatives ajv tried (`oneOf`, `if`…) say nothing to a person: kept out. */
const NOISE = new Set(['oneOf', 'anyOf', 'if', 'not', 'then', 'else', '$dynamicRef']);

function sentence(error: ErrorObject): string {
  const at = error.instancePath === '' ? 'the document' : error.instancePath;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required')
    return `${at}: the field \`${String(params.missingProperty)}\` is missing.`;
  if (error.keyword === 'additionalProperties')
    return `${at}: \`${String(params.additionalProperty)}\` is not an OpenAPI field here.`;
  if (error.keyword === 'enum')
    return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`;
  return `${at} ${error.message ?? 'is not valid'}.`;
}

export function readOpenApiText(text: string): ReadResult {
  let value: unknown;
  const json = text.trimStart().startsWith('{');
  try {
    value = json ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 1000 });
  } catch (error) {
    return {
      problems: [`It is not valid ${json ? 'JSON' : 'YAML'}: ${(error as Error).message.split('\n')[0]}`],
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { problems: ['It must be an object with an `openapi` field (an OpenAPI 3.0 or 3.1 document).'] };
  const document = value as Record<string, unknown>;
  const version = document.openapi;
  if (typeof version !== 'string' || !/^3\.[01]\.\d+$/.test(version))
    return {
      problems: [
        `openapi is ${JSON.stringify(version ?? null)}; only OpenAPI 3.0.x and 3.1.x documents can be compared (e.g. "3.0.3" or "3.1.1").`,
      ],
    };
  const validate = validatorFor(version.startsWith('3.0') ? '3.0' : '3.1');
  if (validate(document)) return { document };
  const problems = [
    ...new Set(
      (validate.errors ?? [])
        // A missing `$ref` is the other branch of "a Reference or the object itself".
        .filter(
          (error) =>
            !NOISE.has(error.keyword) &&
            (error.params as { missingProperty?: string }).missingProperty !== '$ref',
        )
        .map(sentence),
    ),
  ];
  if (problems.length === 0) problems.push('It does not match the OpenAPI schema of its version.');
  return {
    problems:
      problems.length > MAX_PROBLEMS
        ? [...problems.slice(0, MAX_PROBLEMS), `…and ${problems.length - MAX_PROBLEMS} more.`]
        : problems,
  };
}
