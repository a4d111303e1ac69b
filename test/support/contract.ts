import assert from 'node:assert/strict';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

interface OperationEntry {
  pattern: RegExp;
  template: string;
  method: string;
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

/**
 * Checks every response a test receives against an OpenAPI document: the status must be one the
 * operation declares, and the body must match its schema. Code and document disagreeing fails
 * the test that saw it.
 */
export class ContractChecker {
  readonly #ajv: Ajv;
  readonly #operations: OperationEntry[] = [];
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #errorSchemaRef: string;
  /** operationId → statuses seen, for coverage reports. */
  readonly seen = new Map<string, Set<number>>();

  constructor(document: Record<string, unknown>, errorSchemaName = 'Error') {
    this.#ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    this.#ajv.addSchema(document, 'doc');
    this.#errorSchemaRef = `doc#/components/schemas/${errorSchemaName}`;
    const paths = document.paths as Record<string, Record<string, OperationEntry['responses'] & object>>;
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        this.#operations.push({
          template,
          method: method.toUpperCase(),
          pattern: new RegExp(`^${template.replaceAll(/\{[^}]+\}/g, '[^/]+')}$`),
          responses: (op as { responses: OperationEntry['responses'] }).responses,
        });
      }
    }
  }

  check(method: string, url: string, status: number, contentType: string | undefined, body: string): void {
    const path = url.split('?')[0] ?? url;
    const effective = method === 'HEAD' ? 'GET' : method;
    const candidates = this.#operations.filter((o) => o.pattern.test(path));
    const op = candidates.find((o) => o.method === effective);
    if (!op) {
      // Unknown route or method: must be the documented 404/405 error body (none for HEAD).
      assert.ok(
        status === 404 || status === 405,
        `${method} ${path} is not in the document but answered ${status}`,
      );
      if (method === 'HEAD') assert.equal(body, '');
      else this.#validate(this.#errorSchemaRef, `${method} ${path} → ${status}`, contentType, body);
      return;
    }
    const key = `${op.method} ${op.template}`;
    const response = op.responses[String(status)];
    assert.ok(response, `${key} answered ${status}, which the document does not declare`);
    const opId = key;
    if (!this.seen.has(opId)) this.seen.set(opId, new Set());
    this.seen.get(opId)?.add(status);
    const mediaType = (contentType ?? '').split(';')[0]?.trim() ?? '';
    if (mediaType !== 'application/json' && mediaType !== '' && response.content?.[mediaType]) {
      // Declared text of another media type (a document as YAML): the content type is the contract.
      assert.notEqual(body, '', `${key} → ${status} sent an empty ${mediaType} body`);
      return;
    }
    const schemaEntry = response.content?.['application/json'];
    if (!schemaEntry || method === 'HEAD') {
      assert.equal(body, '', `${key} → ${status} declares no body but sent one`);
      return;
    }
    const pointer = `doc#/paths/${escapePointer(op.template)}/${op.method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
    this.#validate(pointer, `${key} → ${status}`, contentType, body);
  }

  #validate(ref: string, what: string, contentType: string | undefined, body: string): void {
    assert.match(contentType ?? '', /^application\/json/, `${what}: content-type is ${contentType}`);
    let validate = this.#validators.get(ref);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: ref });
      this.#validators.set(ref, validate);
    }
    const data = JSON.parse(body) as unknown;
    assert.ok(
      validate(data),
      `${what}: body does not match the document: ${this.#ajv.errorsText(validate.errors)}\n${body}`,
    );
  }
}

function escapePointer(template: string): string {
  return template.replaceAll('~', '~0').replaceAll('/', '~1');
}
