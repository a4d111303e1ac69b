/**
 * Operation-level comparison: which operations were added or removed (with the lifecycle rule),
 * and for each one in both documents its deprecation, security, parameters, request body and
 * responses. Operations are matched by method and path template with parameter names left out,
 * so renaming `{id}` to `{petId}` is no change.
 */
import { OPERATION_METHODS } from '../operation-matcher.ts';
import { compareSchemas, type SchemaComparison } from './diff-schemas.ts';
import {
  type DocumentSide,
  isObject,
  type Json,
  type Located,
  matchUp,
  pointer,
  sameJson,
} from './document.ts';

export interface Operation {
  readonly method: string;
  readonly template: string;
  readonly node: Json;
  readonly pointer: string;
  /** The path item's parameters, overridden by the operation's (by `in` and name). */
  readonly parameters: Located[];
}

export type Reporter = (id: string, operation: string | undefined, location: string, message: string) => void;

const PARAMETER = /\{[^{}/]+\}/g;
/** A template with its parameters' names left out: `/pets/{}`. */
const shapeOf = (template: string) => template.replace(PARAMETER, '{}');
export const operationName = (op: Pick<Operation, 'method' | 'template'>) =>
  `${op.method.toUpperCase()} ${op.template}`;

export function operationsOf(side: DocumentSide): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  const paths = side.root.paths;
  if (!isObject(paths)) return operations;
  for (const [template, rawItem] of Object.entries(paths)) {
    const item = side.resolve({ node: rawItem, pointer: pointer('/paths', template) });
    if (!isObject(item.node)) continue;
    const shared = Array.isArray(item.node.parameters)
      ? item.node.parameters.map((node, i) => ({ node, pointer: pointer(item.pointer, 'parameters', i) }))
      : [];
    for (const method of OPERATION_METHODS) {
      const node = item.node[method];
      if (!isObject(node)) continue;
      const at = pointer(item.pointer, method);
      const own = Array.isArray(node.parameters)
        ? node.parameters.map((parameter, i) => ({ node: parameter, pointer: pointer(at, 'parameters', i) }))
        : [];
      const keys = new Set(own.map((parameter) => parameterKey(side, parameter)));
      const parameters = [...shared.filter((parameter) => !keys.has(parameterKey(side, parameter))), ...own];
      const key = `${method} ${shapeOf(template)}`;
      if (!operations.has(key)) operations.set(key, { method, template, node, pointer: at, parameters });
    }
  }
  return operations;
}

function parameterKey(side: DocumentSide, parameter: Located): string {
  const node = side.resolve(parameter).node;
  if (!isObject(node)) return `?${parameter.pointer}`;
  const where = String(node.in);
  const name = String(node.name);
  return `${where}:${where === 'header' ? name.toLowerCase() : name}`;
}

const parseDate = (value: unknown): number | undefined => {
  if (typeof value !== 'string' && !(value instanceof Date)) return undefined;
  const at = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isFinite(at) ? at : undefined;
};
const sunsetOf = (node: Json) => parseDate(node['x-sunset'] ?? node['x-deprecated-sunset']);
const dayText = (at: number) => new Date(at).toISOString().slice(0, 10);

/** The lifecycle rule: only a deprecated operation past its sunset may go without breaking callers. */
export function reportRemoved(op: Operation, now: Date, report: Reporter): void {
  const name = operationName(op);
  if (op.node.deprecated !== true) {
    report(
      'api-removed-without-deprecation',
      name,
      op.pointer,
      `${name} was removed without being deprecated first.`,
    );
    return;
  }
  const sunset = sunsetOf(op.node);
  if (sunset === undefined)
    report(
      'api-removed-without-sunset',
      name,
      op.pointer,
      `${name} was removed; it was deprecated but named no sunset date (x-sunset).`,
    );
  else if (sunset > now.getTime())
    report(
      'api-removed-before-sunset',
      name,
      op.pointer,
      `${name} was removed before its sunset date, ${dayText(sunset)}.`,
    );
  else
    report(
      'api-removed-with-deprecation',
      name,
      op.pointer,
      `${name} was removed after its sunset date, ${dayText(sunset)}.`,
    );
}

/** Compares one operation found in both documents. */
export function compareOperation(
  comparison: Sides,
  before: Operation,
  after: Operation,
  report: Reporter,
): void {
  if (unchanged(comparison, before, after)) return;
  const name = operationName(after);
  const say = (id: string, location: string, message: string) => report(id, name, location, message);
  const { base, revision } = comparison;
  const schemas = (): SchemaComparison => ({
    ...comparison,
    visited: new Set(),
    emitted: new Set(),
    emit: say,
  });

  if (before.node.deprecated !== true && after.node.deprecated === true) {
    const sunset = sunsetOf(after.node);
    say(
      'endpoint-deprecated',
      after.pointer,
      `${name} was deprecated${sunset === undefined ? '' : `, with its sunset on ${dayText(sunset)}`}.`,
    );
  }
  if (before.node.deprecated === true && after.node.deprecated !== true)
    say('endpoint-reactivated', after.pointer, `${name} is no longer deprecated.`);
  if (before.node.deprecated === true && after.node.deprecated === true) {
    const was = sunsetOf(before.node);
    const now = sunsetOf(after.node);
    if (was !== undefined && now !== undefined && now < was)
      say(
        'api-sunset-date-changed-too-small',
        after.pointer,
        `The sunset date of ${name} moved earlier, from ${dayText(was)} to ${dayText(now)}.`,
      );
  }

  const pair: Pair = { comparison, before, after, say };
  compareSecurity(base, revision, before, after, say);
  compareParameters(pair, schemas());
  compareRequestBodies(pair, schemas());
  compareResponses(pair, schemas());
}

/** Whether an operation is the same text on both sides and every ref it uses is stable. */
function unchanged(comparison: Sides, before: Operation, after: Operation): boolean {
  const refs = new Set<string>();
  if (before.template !== after.template || before.parameters.length !== after.parameters.length)
    return false;
  if (!sameJson(before.node, after.node, refs)) return false;
  for (let i = 0; i < before.parameters.length; i++)
    if (!sameJson(before.parameters[i]?.node, after.parameters[i]?.node, refs)) return false;
  if (
    !Array.isArray(after.node.security) &&
    !sameJson(comparison.base.root.security, comparison.revision.root.security)
  )
    return false;
  for (const ref of refs) if (!comparison.stable.has(ref)) return false;
  return true;
}

type Say = (id: string, location: string, message: string) => void;

/** The two documents being compared, without the state of one schema walk. */
type Sides = Omit<SchemaComparison, 'visited' | 'emitted' | 'emit'>;

/** One operation found in both documents, and where its changes are said. */
interface Pair {
  readonly comparison: Sides;
  readonly before: Operation;
  readonly after: Operation;
  readonly say: Say;
}

/** The security alternatives in force: each a map of scheme → scopes; anonymous when one is empty. */
function securityOf(
  side: DocumentSide,
  op: Operation,
): { alternatives: Map<string, Map<string, Set<string>>>; anonymous: boolean; pointer: string } {
  const own = Array.isArray(op.node.security);
  const list = own ? op.node.security : side.root.security;
  const alternatives = new Map<string, Map<string, Set<string>>>();
  let anonymous = !Array.isArray(list) || list.length === 0;
  if (Array.isArray(list)) {
    for (const requirement of list) {
      if (!isObject(requirement)) continue;
      const schemes = Object.keys(requirement).sort();
      if (schemes.length === 0) anonymous = true;
      const scopes = new Map(
        schemes.map((scheme) => [
          scheme,
          new Set(Array.isArray(requirement[scheme]) ? (requirement[scheme] as unknown[]).map(String) : []),
        ]),
      );
      alternatives.set(schemes.join(' + '), scopes);
    }
  }
  return { alternatives, anonymous, pointer: own ? pointer(op.pointer, 'security') : '/security' };
}

function compareSecurity(
  base: DocumentSide,
  revision: DocumentSide,
  before: Operation,
  after: Operation,
  say: Say,
): void {
  const b = securityOf(base, before);
  const r = securityOf(revision, after);
  const name = operationName(after);
  if (b.anonymous && !r.anonymous) {
    const ways = [...r.alternatives.keys()].join(', or ');
    say(
      'api-authentication-required',
      r.pointer,
      `${name} now requires credentials (${ways}); anonymous calls are refused.`,
    );
    return;
  }
  if (!b.anonymous && r.anonymous) {
    say('api-authentication-optional', r.pointer, `${name} now accepts anonymous calls.`);
    return;
  }
  if (b.anonymous) return;
  matchUp(b.alternatives, r.alternatives, {
    added: (_, key) => say('api-security-added', r.pointer, `${name} can now also be called with ${key}.`),
    both(was, scopes) {
      for (const [scheme, list] of scopes) {
        for (const scope of list)
          if (!was.get(scheme)?.has(scope))
            say(
              'api-security-scope-added',
              r.pointer,
              `${name} now needs the scope \`${scope}\` of ${scheme}.`,
            );
        for (const scope of was.get(scheme) ?? [])
          if (!list.has(scope))
            say(
              'api-security-scope-removed',
              r.pointer,
              `${name} no longer needs the scope \`${scope}\` of ${scheme}.`,
            );
      }
    },
    removed: (_, key) =>
      say('api-security-removed', r.pointer, `${name} can no longer be called with ${key}.`),
  });
}

interface ParameterEntry {
  readonly key: string;
  readonly node: Json;
  readonly pointer: string;
  readonly label: string;
}

/** Parameters by identity; path parameters by position, so renaming one is no change. */
function parametersOf(side: DocumentSide, op: Operation): Map<string, ParameterEntry> {
  const entries = new Map<string, ParameterEntry>();
  const pathNames = [...op.template.matchAll(PARAMETER)].map((match) => match[0].slice(1, -1));
  for (const parameter of op.parameters) {
    const resolved = side.resolve(parameter);
    if (!isObject(resolved.node)) continue;
    const where = String(resolved.node.in);
    const name = String(resolved.node.name);
    const position = where === 'path' ? pathNames.indexOf(name) : -1;
    const key =
      where === 'path' && position >= 0
        ? `path#${position}`
        : `${where}:${where === 'header' ? name.toLowerCase() : name}`;
    entries.set(key, {
      key,
      node: resolved.node,
      pointer: resolved.pointer,
      label: `the ${where} parameter \`${name}\``,
    });
  }
  return entries;
}

/** A parameter's schema: `schema`, or the one of its `content`. */
function parameterSchema(entry: ParameterEntry): Located | undefined {
  if (entry.node.schema !== undefined)
    return { node: entry.node.schema, pointer: pointer(entry.pointer, 'schema') };
  if (isObject(entry.node.content)) {
    const [type, media] = Object.entries(entry.node.content)[0] ?? [];
    if (type !== undefined && isObject(media) && media.schema !== undefined)
      return { node: media.schema, pointer: pointer(entry.pointer, 'content', type, 'schema') };
  }
  return undefined;
}

function compareParameters({ comparison, before, after, say }: Pair, schemas: SchemaComparison): void {
  matchUp(parametersOf(comparison.base, before), parametersOf(comparison.revision, after), {
    added(entry) {
      const required = entry.node.required === true;
      say(
        required ? 'new-required-request-parameter' : 'new-optional-request-parameter',
        entry.pointer,
        `${capitalize(entry.label)} was added${required ? ', required' : ''}.`,
      );
    },
    both(was, entry) {
      const required = entry.node.required === true;
      if (was.node.required !== true && required)
        say(
          'request-parameter-became-required',
          entry.pointer,
          `${capitalize(entry.label)} became required.`,
        );
      if (was.node.required === true && !required)
        say(
          'request-parameter-became-optional',
          entry.pointer,
          `${capitalize(entry.label)} became optional.`,
        );
      const bs = parameterSchema(was);
      const rs = parameterSchema(entry);
      if (bs !== undefined && rs !== undefined)
        compareSchemas(schemas, bs, rs, { prefix: 'request-parameter', place: entry.label, path: '' });
    },
    removed: (entry) =>
      say('request-parameter-removed', entry.pointer, `${capitalize(entry.label)} was removed.`),
  });
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function contentOf(node: Json, at: string): Map<string, Located> {
  const content = new Map<string, Located>();
  if (isObject(node.content)) {
    for (const [type, media] of Object.entries(node.content)) {
      // `application/json; charset=utf-8` is `application/json`.
      content.set((type.split(';')[0] ?? type).trim().toLowerCase(), {
        node: isObject(media) ? media.schema : undefined,
        pointer: pointer(at, 'content', type),
      });
    }
  }
  return content;
}

function compareRequestBodies({ comparison, before, after, say }: Pair, schemas: SchemaComparison): void {
  const b = comparison.base.resolve({
    node: before.node.requestBody,
    pointer: pointer(before.pointer, 'requestBody'),
  });
  const r = comparison.revision.resolve({
    node: after.node.requestBody,
    pointer: pointer(after.pointer, 'requestBody'),
  });
  const bNode = isObject(b.node) ? b.node : undefined;
  const rNode = isObject(r.node) ? r.node : undefined;
  if (bNode === undefined && rNode === undefined) return;
  if (bNode === undefined && rNode !== undefined) {
    const required = rNode.required === true;
    say(
      required ? 'added-required-request-body' : 'added-optional-request-body',
      r.pointer,
      `A${required ? ' required' : 'n optional'} request body was added.`,
    );
    return;
  }
  if (bNode !== undefined && rNode === undefined) {
    say('request-body-removed', b.pointer, 'The request body was removed.');
    return;
  }
  if (bNode === undefined || rNode === undefined) return;
  if (bNode.required !== true && rNode.required === true)
    say('request-body-became-required', r.pointer, 'The request body became required.');
  if (bNode.required === true && rNode.required !== true)
    say('request-body-became-optional', r.pointer, 'The request body became optional.');
  compareContent(contentOf(bNode, b.pointer), contentOf(rNode, r.pointer), say, schemas, {
    prefix: 'request-body',
    place: (type) => `the request body (${type})`,
    added: ['request-body-media-type-added', (type) => `The request body can now be sent as ${type}.`],
    removed: [
      'request-body-media-type-removed',
      (type) => `The request body can no longer be sent as ${type}.`,
    ],
  });
}

/**
 * A body's media types on both sides: each one added or removed is said, and the schemas of the
 * types on both sides are compared.
 */
function compareContent(
  before: Map<string, Located>,
  after: Map<string, Located>,
  say: Say,
  schemas: SchemaComparison,
  words: {
    prefix: 'request-body' | 'response-body';
    place: (type: string) => string;
    added: [id: string, message: (type: string) => string];
    removed: [id: string, message: (type: string) => string];
  },
): void {
  matchUp(before, after, {
    added: (media, type) => say(words.added[0], media.pointer, words.added[1](type)),
    both(was, media, type) {
      if (was.node !== undefined && media.node !== undefined)
        compareSchemas(
          schemas,
          { node: was.node, pointer: pointer(was.pointer, 'schema') },
          { node: media.node, pointer: pointer(media.pointer, 'schema') },
          { prefix: words.prefix, place: words.place(type), path: '' },
        );
    },
    removed: (media, type) => say(words.removed[0], media.pointer, words.removed[1](type)),
  });
}

const isSuccess = (status: string) => /^[123]/.test(status);

function compareResponses({ comparison, before, after, say }: Pair, schemas: SchemaComparison): void {
  const { base, revision } = comparison;
  const bAll = isObject(before.node.responses) ? before.node.responses : {};
  const rAll = isObject(after.node.responses) ? after.node.responses : {};
  const byKey = (all: Json) => new Map(Object.keys(all).map((status) => [status.toUpperCase(), status]));
  const response = (side: DocumentSide, op: Operation, all: Json, status: string) =>
    side.resolve({ node: all[status], pointer: pointer(op.pointer, 'responses', status) });
  const answer = (status: string) => (status === 'default' ? 'with a default response' : status);
  matchUp(byKey(bAll), byKey(rAll), {
    added: (status) =>
      say(
        isSuccess(status) ? 'response-success-status-added' : 'response-non-success-status-added',
        response(revision, after, rAll, status).pointer,
        `${operationName(after)} can now answer ${answer(status)}.`,
      ),
    both(bStatus, status) {
      const bResponse = response(base, before, bAll, bStatus);
      const rResponse = response(revision, after, rAll, status);
      if (!isObject(bResponse.node) || !isObject(rResponse.node)) return;
      const label = status === 'default' ? 'the default response' : `the ${status} response`;
      compareContent(
        contentOf(bResponse.node, bResponse.pointer),
        contentOf(rResponse.node, rResponse.pointer),
        say,
        schemas,
        {
          prefix: 'response-body',
          place: (type) => `${label} (${type})`,
          added: ['response-media-type-added', (type) => `${capitalize(label)} can now be ${type}.`],
          removed: ['response-media-type-removed', (type) => `${capitalize(label)} is no longer ${type}.`],
        },
      );
      compareHeaders(comparison, bResponse, rResponse, label, say, schemas);
    },
    removed: (status) =>
      say(
        isSuccess(status) ? 'response-success-status-removed' : 'response-non-success-status-removed',
        pointer(before.pointer, 'responses', status),
        `${operationName(after)} no longer answers ${answer(status)}.`,
      ),
  });
}

function headersOf(
  side: DocumentSide,
  response: Located,
): Map<string, { name: string; node: Json; pointer: string }> {
  const headers = new Map<string, { name: string; node: Json; pointer: string }>();
  const all = isObject(response.node) && isObject(response.node.headers) ? response.node.headers : {};
  for (const [name, raw] of Object.entries(all)) {
    const header = side.resolve({ node: raw, pointer: pointer(response.pointer, 'headers', name) });
    if (isObject(header.node))
      headers.set(name.toLowerCase(), { name, node: header.node, pointer: header.pointer });
  }
  return headers;
}

function compareHeaders(
  comparison: Sides,
  before: Located,
  after: Located,
  label: string,
  say: Say,
  schemas: SchemaComparison,
): void {
  matchUp(headersOf(comparison.base, before), headersOf(comparison.revision, after), {
    added: (header) =>
      say('response-header-added', header.pointer, `${capitalize(label)} has a new header, ${header.name}.`),
    both(was, header) {
      if (was.node.required === true && header.node.required !== true)
        say(
          'response-header-became-optional',
          header.pointer,
          `The header ${header.name} of ${label} became optional: it may be missing.`,
        );
      if (was.node.schema !== undefined && header.node.schema !== undefined)
        compareSchemas(
          schemas,
          { node: was.node.schema, pointer: pointer(was.pointer, 'schema') },
          { node: header.node.schema, pointer: pointer(header.pointer, 'schema') },
          { prefix: 'response-header', place: `the header ${header.name} of ${label}`, path: '' },
        );
    },
    removed: (header) =>
      say(
        header.node.required === true
          ? 'required-response-header-removed'
          : 'optional-response-header-removed',
        header.pointer,
        `The header ${header.name} of ${label} was removed.`,
      ),
  });
}
