/**
 * Structural comparison of two schemas used at the same place (a parameter, a request or response
 * body, a response header), walking properties, items and alternatives recursively. What a change
 * means depends on the direction: a request that accepts less, or a response that may return more,
 * breaks callers (./rules.ts). Local refs are followed lazily. A ref whose target did not change
 * is skipped; the changes inside a ref pair are computed once per document pair and replayed where
 * it is used again (with the path it is used at), so GitHub's 1,200 operations sharing changed
 * components cost one walk of each; a component changed at several places of one operation is
 * reported once there; a cycle (recursive schemas) is cut where it closes.
 */
import { type DocumentSide, isObject, type Json, type Located, matchUp, pointer } from './document.ts';
import { BOUNDS, type SchemaPrefix } from './rules.ts';

export type Emit = (id: string, location: string, message: string) => void;

export interface SchemaComparison {
  readonly base: DocumentSide;
  readonly revision: DocumentSide;
  readonly stable: ReadonlySet<string>;
  /** The changes inside ref pairs, shared by every operation of the comparison. */
  readonly memo: SchemaMemo;
  /** Ref pairs already compared in this operation (with their prefix). */
  readonly visited: Set<string>;
  /** Changes already reported in this operation. */
  readonly emitted: Set<object>;
  readonly emit: Emit;
}

export interface Where {
  /** The prefix of the schema's top: request-parameter, request-body, response-body, response-header. */
  readonly prefix: SchemaPrefix;
  /** Where the schema is used, for people: "the request body (application/json)". */
  readonly place: string;
  /** The property path inside it ('' at the top): `owner.login`, `tags[]`. */
  readonly path: string;
}

const MAX_DEPTH = 64;

/** Keywords an `allOf` member does not contribute to the merged schema. */
const NOT_MERGED = new Set([
  'properties',
  'required',
  'allOf',
  'description',
  'title',
  'example',
  'examples',
]);

interface View {
  readonly schema: Json;
  readonly pointer: string;
  readonly properties: Map<string, Located>;
  readonly required: Set<string>;
  /** `allOf` members that could not be merged (they carry their own alternatives). */
  readonly allOf: Located[];
}

/**
 * A schema with its plain `allOf` members merged in (properties, required, and the keywords the
 * schema does not set itself), so that moving properties into a shared base schema is no change.
 */
function view(side: DocumentSide, located: Located, depth = 0): View {
  const resolved = side.resolve(located);
  const node = isObject(resolved.node) ? resolved.node : {};
  // Copied only when allOf members are merged into it.
  const schema: Json = Array.isArray(node.allOf) ? { ...node } : node;
  const properties = new Map<string, Located>();
  if (isObject(schema.properties)) {
    for (const [name, node] of Object.entries(schema.properties))
      properties.set(name, { node, pointer: pointer(resolved.pointer, 'properties', name) });
  }
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const allOf: Located[] = [];
  if (Array.isArray(schema.allOf)) {
    schema.allOf.forEach((node, i) => {
      const member: Located = { node, pointer: pointer(resolved.pointer, 'allOf', i) };
      const target = side.resolve(member).node;
      if (!isObject(target) || target.oneOf !== undefined || target.anyOf !== undefined || depth > 8) {
        allOf.push(member);
        return;
      }
      const inner = view(side, member, depth + 1);
      for (const [name, property] of inner.properties)
        if (!properties.has(name)) properties.set(name, property);
      for (const name of inner.required) required.add(name);
      for (const [key, value] of Object.entries(inner.schema))
        if (!NOT_MERGED.has(key) && schema[key] === undefined) schema[key] = value;
      allOf.push(...inner.allOf);
    });
  }
  return { schema, pointer: resolved.pointer, properties, required, allOf };
}

/** The schema's types without null (undefined: any type), and whether it allows null. */
/**
 * A schema without `type` that describes properties is taken as an object, one with `items` as an
 * array: writing the `type: object` it meant is no change (JSON Schema would let other types
 * through, which no caller relies on).
 */
function implicitType(schema: Json): string[] | undefined {
  if (isObject(schema.properties) || isObject(schema.additionalProperties)) return ['object'];
  if (schema.items !== undefined) return ['array'];
  return undefined;
}

function typesOf(schema: Json): { types: Set<string> | undefined; nullable: boolean } {
  const raw = schema.type;
  const list = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw.map(String) : implicitType(schema);
  const nullable = schema.nullable === true || (list?.includes('null') ?? false);
  const types = list?.filter((type) => type !== 'null');
  return {
    types: types === undefined || (types.length === 0 && nullable) ? undefined : new Set(types),
    nullable,
  };
}

/** Whether every type of `narrow` is allowed by `wide` (integer is a number). */
function covers(wide: Set<string> | undefined, narrow: Set<string> | undefined): boolean {
  if (wide === undefined) return true;
  if (narrow === undefined) return false;
  return [...narrow].every((type) => wide.has(type) || (type === 'integer' && wide.has('number')));
}

const typeText = (types: Set<string> | undefined) =>
  types === undefined ? 'any type' : [...types].join(' or ');
const valueText = (value: unknown) => JSON.stringify(value);

function enumOf(schema: Json): unknown[] | undefined {
  const values = Array.isArray(schema.enum)
    ? schema.enum
    : schema.const !== undefined
      ? [schema.const]
      : undefined;
  return values?.filter((value) => value !== null);
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** "property `owner.login` of the response body (200, application/json)", or the place itself. */
const subjectOf = (where: Where) =>
  where.path === '' ? where.place : `property \`${where.path}\` of ${where.place}`;

/** The prefix of what is inside a schema: a body's properties are properties. */
function nestedPrefix(prefix: SchemaPrefix): SchemaPrefix {
  if (prefix === 'request-body') return 'request-property';
  if (prefix === 'response-body') return 'response-property';
  return prefix;
}

/** One change found inside a schema: its message is made once the subject (place, path) is known. */
interface Origin {
  readonly id: string;
  readonly location: string;
  readonly text: (subject: string) => string;
}
/** A change at a property path relative to where the comparison started. */
interface Entry {
  readonly origin: Origin;
  readonly path: string;
}
type Sink = (entry: Entry) => void;

/** The changes inside one ref pair, computed once per document pair and replayed at each use. */
export type SchemaMemo = Map<string, readonly Entry[]>;

interface Walk {
  readonly comparison: SchemaComparison;
  /** Memo keys being computed: meeting one again is a cycle, cut there. */
  readonly inProgress: Set<string>;
  /** Whether a cycle was cut under the memo being computed (its result depends on the path). */
  cut: boolean;
  /** How many memo computations are under way (the per-operation shortcut is off inside them). */
  memoDepth: number;
}

/** `owner` + `login` → `owner.login`; `tags` + `[]` → `tags[]`. */
const joinPath = (outer: string, inner: string) =>
  outer === '' ? inner : inner === '' ? outer : inner.startsWith('[') ? outer + inner : `${outer}.${inner}`;

export function compareSchemas(
  comparison: SchemaComparison,
  baseSchema: Located,
  revisionSchema: Located,
  where: Where,
): void {
  const walk: Walk = { comparison, inProgress: new Set(), cut: false, memoDepth: 0 };
  const sink: Sink = ({ origin, path }) => {
    // One component changed at several places of one operation is reported once, at the first.
    if (comparison.emitted.has(origin)) return;
    comparison.emitted.add(origin);
    const subject = subjectOf({ ...where, path: joinPath(where.path, path) });
    comparison.emit(origin.id, origin.location, capitalize(origin.text(subject)));
  };
  compareAt(walk, baseSchema, revisionSchema, where.prefix, where.path === '', sink, 0);
}

/**
 * Compares two schemas at a place; `top` when they are the place's schema itself (ids say
 * `request-body-…`), not a property inside it (`request-property-…`). Emits entries with paths
 * relative to here.
 */
function compareAt(
  walk: Walk,
  baseSchema: Located,
  revisionSchema: Located,
  prefix: SchemaPrefix,
  top: boolean,
  sink: Sink,
  depth: number,
): void {
  const { base, revision, stable, visited, memo } = walk.comparison;
  if (depth > MAX_DEPTH) return;
  const before = base.resolve(baseSchema);
  const after = revision.resolve(revisionSchema);
  if (before.ref !== undefined && before.ref === after.ref && stable.has(before.ref)) return;
  if (before.ref === undefined && after.ref === undefined) {
    compareBody(walk, before, after, prefix, top, sink, depth);
    return;
  }
  // The pair, whether at the top of its place or inside it (a recursive schema is both).
  const pair = `${prefix}|${before.pointer}|${after.pointer}`;
  const key = `${pair}|${top}`;
  if (walk.memoDepth === 0) {
    // Already walked in this operation: everything under it was reported there.
    if (visited.has(pair)) return;
    visited.add(pair);
  }
  const known = memo.get(key);
  if (known !== undefined) {
    for (const entry of known) sink(entry);
    return;
  }
  if (walk.inProgress.has(pair)) {
    walk.cut = true;
    return;
  }
  const entries: Entry[] = [];
  const outerCut = walk.cut;
  walk.cut = false;
  walk.inProgress.add(pair);
  walk.memoDepth++;
  // Each change once, at the first path it is met (a component used at many places of a shared
  // schema would otherwise multiply at every level of nesting).
  const seen = new Set<Origin>();
  compareBody(
    walk,
    before,
    after,
    prefix,
    top,
    (entry) => {
      if (seen.has(entry.origin)) return;
      seen.add(entry.origin);
      entries.push(entry);
    },
    depth,
  );
  walk.memoDepth--;
  walk.inProgress.delete(pair);
  // A result that met a cycle depends on where the cycle was entered: not kept.
  if (!walk.cut) memo.set(key, entries);
  walk.cut ||= outerCut;
  for (const entry of entries) sink(entry);
}

function compareBody(
  walk: Walk,
  before: Located,
  after: Located,
  prefix: SchemaPrefix,
  top: boolean,
  sink: Sink,
  depth: number,
): void {
  const { base, revision } = walk.comparison;
  const b = view(base, before);
  const r = view(revision, after);
  const idPrefix = top ? prefix : nestedPrefix(prefix);
  const at = r.pointer;
  const emit = (aspect: string, text: (subject: string) => string, location = at) =>
    sink({ origin: { id: `${idPrefix}-${aspect}`, location, text }, path: '' });
  const emitAt = (id: string, path: string, location: string, text: (subject: string) => string) =>
    sink({ origin: { id, location, text }, path });

  // Types and null.
  const bt = typesOf(b.schema);
  const rt = typesOf(r.schema);
  const widened = covers(rt.types, bt.types);
  const narrowed = covers(bt.types, rt.types);
  const from = typeText(bt.types);
  const to = typeText(rt.types);
  let comparable = true;
  if (!widened && !narrowed) {
    emit('type-changed', (s) => `the type of ${s} changed from ${from} to ${to}.`);
    comparable = false;
  } else if (widened && !narrowed) {
    emit('type-generalized', (s) => `the type of ${s} was widened from ${from} to ${to}.`);
  } else if (narrowed && !widened) {
    emit('type-specialized', (s) => `the type of ${s} was narrowed from ${from} to ${to}.`);
  }
  if (!bt.nullable && rt.nullable) emit('became-nullable', (s) => `${s} can now be null.`);
  if (bt.nullable && !rt.nullable) emit('became-not-nullable', (s) => `${s} can no longer be null.`);
  if (!comparable) return;

  // Values.
  const be = enumOf(b.schema);
  const re = enumOf(r.schema);
  if (be === undefined && re !== undefined) {
    const list = re.map(valueText).join(', ');
    emit('became-enum', (s) => `${s} is now limited to ${list}.`);
  } else if (be !== undefined && re === undefined) {
    emit('became-not-enum', (s) => `${s} is no longer limited to a list of values.`);
  } else if (be !== undefined && re !== undefined) {
    const beforeText = new Set(be.map(valueText));
    const afterText = new Set(re.map(valueText));
    for (const value of afterText)
      if (!beforeText.has(value)) emit('enum-value-added', (s) => `${s} has a new possible value, ${value}.`);
    for (const value of beforeText)
      if (!afterText.has(value)) emit('enum-value-removed', (s) => `${s} no longer has the value ${value}.`);
  }
  const bp = typeof b.schema.pattern === 'string' ? b.schema.pattern : undefined;
  const rp = typeof r.schema.pattern === 'string' ? r.schema.pattern : undefined;
  if (bp === undefined && rp !== undefined)
    emit('pattern-added', (s) => `${s} must now match the pattern \`${rp}\`.`);
  else if (bp !== undefined && rp === undefined)
    emit('pattern-removed', (s) => `${s} no longer has to match the pattern \`${bp}\`.`);
  else if (bp !== rp)
    emit('pattern-changed', (s) => `the pattern of ${s} changed from \`${bp}\` to \`${rp}\`.`);
  if (
    b.schema.format !== r.schema.format &&
    (typeof b.schema.format === 'string' || typeof r.schema.format === 'string')
  ) {
    const was = b.schema.format === undefined ? 'none' : `\`${String(b.schema.format)}\``;
    const now = r.schema.format === undefined ? 'none' : `\`${String(r.schema.format)}\``;
    emit('format-changed', (s) => `the format of ${s} changed from ${was} to ${now}.`);
  }

  // Bounds.
  for (const { keyword, name } of BOUNDS) {
    const was = typeof b.schema[keyword] === 'number' ? (b.schema[keyword] as number) : undefined;
    const now = typeof r.schema[keyword] === 'number' ? (r.schema[keyword] as number) : undefined;
    if (was === now) continue;
    if (was === undefined) emit(`${name}-set`, (s) => `${s} now has a ${keyword} of ${now}.`);
    else if (now === undefined)
      emit(`${name}-unset`, (s) => `${s} no longer has a ${keyword} (it was ${was}).`);
    else {
      const direction = now > was ? 'increased' : 'decreased';
      emit(`${name}-${direction}`, (s) => `the ${keyword} of ${s} ${direction} from ${was} to ${now}.`);
    }
  }

  compareDiscriminators(b, r, emit);

  // Properties.
  const request = prefix.startsWith('request');
  const hidden = (property: Located, side: DocumentSide) => {
    const target = side.resolve(property).node;
    return isObject(target) && target[request ? 'readOnly' : 'writeOnly'] === true;
  };
  const nested =
    (inner: Sink, outer: string): Sink =>
    (entry) =>
      inner({ origin: entry.origin, path: joinPath(outer, entry.path) });
  for (const [name, property] of b.properties) {
    const counterpart = r.properties.get(name);
    if (counterpart === undefined) {
      if (hidden(property, base)) continue;
      if (request) emitAt('request-property-removed', name, property.pointer, (s) => `${s} was removed.`);
      else if (b.required.has(name))
        emitAt(
          'response-required-property-removed',
          name,
          property.pointer,
          (s) => `${s}, which was always present, was removed.`,
        );
      else emitAt('response-optional-property-removed', name, property.pointer, (s) => `${s} was removed.`);
      continue;
    }
    if (hidden(counterpart, revision)) continue;
    const wasRequired = b.required.has(name);
    const isRequired = r.required.has(name);
    if (request && !wasRequired && isRequired)
      emitAt('request-property-became-required', name, counterpart.pointer, (s) => `${s} became required.`);
    if (request && wasRequired && !isRequired)
      emitAt('request-property-became-optional', name, counterpart.pointer, (s) => `${s} became optional.`);
    if (!request && wasRequired && !isRequired)
      emitAt(
        'response-property-became-optional',
        name,
        counterpart.pointer,
        (s) => `${s} became optional: it may be missing.`,
      );
    if (!request && !wasRequired && isRequired)
      emitAt(
        'response-property-became-required',
        name,
        counterpart.pointer,
        (s) => `${s} became required: it is always present.`,
      );
    compareAt(walk, property, counterpart, prefix, false, nested(sink, name), depth + 1);
  }
  for (const [name, property] of r.properties) {
    if (b.properties.has(name) || hidden(property, revision)) continue;
    const required = r.required.has(name);
    const id = request
      ? required
        ? 'new-required-request-property'
        : 'new-optional-request-property'
      : required
        ? 'response-required-property-added'
        : 'response-optional-property-added';
    emitAt(id, name, property.pointer, (s) => `${s} was added${required ? ', required' : ''}.`);
  }

  // Items and additional properties: compared one level down.
  const below = (keyword: 'items' | 'additionalProperties', step: string) =>
    compareAt(
      walk,
      { node: b.schema[keyword], pointer: pointer(b.pointer, keyword) },
      { node: r.schema[keyword], pointer: pointer(r.pointer, keyword) },
      prefix,
      false,
      nested(sink, step),
      depth + 1,
    );
  if (b.schema.items !== undefined && r.schema.items !== undefined && !Array.isArray(b.schema.items))
    below('items', '[]');
  if (isObject(b.schema.additionalProperties) && isObject(r.schema.additionalProperties))
    below('additionalProperties', '*');

  // Alternatives: compared at the same place (an alternative of the body is the body).
  const alternatives = (before: Located[], after: Located[], keyword: string, aspect: string) => {
    if (before.length === 0 && after.length === 0) return;
    matchUp(keysOf(base, before), keysOf(revision, after), {
      added: (member, key) =>
        emit(
          `${aspect}-added`,
          (s) => `${s} has a new \`${keyword}\` alternative, ${memberName(key)}.`,
          member.pointer,
        ),
      both: (counterpart, member) => compareAt(walk, counterpart, member, prefix, top, sink, depth + 1),
      removed: (member, key) =>
        emit(
          `${aspect}-removed`,
          (s) => `${s} lost the \`${keyword}\` alternative ${memberName(key)}.`,
          member.pointer,
        ),
    });
  };
  alternatives(members(b, 'oneOf'), members(r, 'oneOf'), 'oneOf', 'one-of');
  alternatives(members(b, 'anyOf'), members(r, 'anyOf'), 'anyOf', 'any-of');
  alternatives(b.allOf, r.allOf, 'allOf', 'all-of');
}

function members(view: View, keyword: 'oneOf' | 'anyOf'): Located[] {
  const list = view.schema[keyword];
  return Array.isArray(list)
    ? list.map((node, i) => ({ node, pointer: pointer(view.pointer, keyword, i) }))
    : [];
}

/** An alternative's identity: the schema it refers to, or its position among the inline ones. */
function keysOf(side: DocumentSide, list: Located[]): Map<string, Located> {
  const keys = new Map<string, Located>();
  let inline = 0;
  for (const member of list) {
    const ref = isObject(member.node) && typeof member.node.$ref === 'string' ? member.node.$ref : undefined;
    const title = side.resolve(member).node;
    keys.set(
      ref ?? (isObject(title) && typeof title.title === 'string' ? `title:${title.title}` : `#${inline++}`),
      member,
    );
  }
  return keys;
}

const memberName = (key: string) =>
  key.startsWith('#/')
    ? `\`${key.split('/').pop()}\``
    : key.startsWith('title:')
      ? `\`${key.slice(6)}\``
      : `number ${Number(key.slice(1)) + 1}`;

function compareDiscriminators(
  b: View,
  r: View,
  emit: (aspect: string, text: (subject: string) => string) => void,
): void {
  const before = isObject(b.schema.discriminator) ? b.schema.discriminator : undefined;
  const after = isObject(r.schema.discriminator) ? r.schema.discriminator : undefined;
  if (before === undefined && after === undefined) return;
  if (before === undefined) {
    emit('discriminator-added', (s) => `${s} now has a discriminator, \`${String(after?.propertyName)}\`.`);
    return;
  }
  if (after === undefined) {
    emit(
      'discriminator-removed',
      (s) => `${s} no longer has a discriminator (it was \`${String(before.propertyName)}\`).`,
    );
    return;
  }
  if (before.propertyName !== after.propertyName)
    emit(
      'discriminator-property-name-changed',
      (s) =>
        `the discriminator of ${s} changed from \`${String(before.propertyName)}\` to \`${String(after.propertyName)}\`.`,
    );
  const bm = isObject(before.mapping) ? before.mapping : {};
  const rm = isObject(after.mapping) ? after.mapping : {};
  for (const [value, target] of Object.entries(rm)) {
    if (!Object.hasOwn(bm, value))
      emit('discriminator-mapping-added', (s) => `the discriminator of ${s} has a new value, "${value}".`);
    else if (bm[value] !== target)
      emit(
        'discriminator-mapping-changed',
        (s) =>
          `the discriminator value "${value}" of ${s} now means ${String(target)} (it meant ${String(bm[value])}).`,
      );
  }
  for (const value of Object.keys(bm))
    if (!Object.hasOwn(rm, value))
      emit(
        'discriminator-mapping-removed',
        (s) => `the discriminator of ${s} no longer has the value "${value}".`,
      );
}
