/**
 * The references of a deployed document, checked the way JSON Schema 2020-12 and OpenAPI 3.1 scope
 * them: a schema's `$id` starts a resource of its own (its URI resolved against the enclosing
 * one), `$anchor` and `$dynamicAnchor` name a place within their resource (so the same
 * `$dynamicAnchor` may be defined once per `$id`), and `$ref` resolves against the resource it is
 * written in. What is data rather than a reference is not followed: vendor extensions (`x-…`),
 * examples, defaults, `const` and `enum` values are the publisher's to write and are kept as
 * written.
 *
 * Ours rather than the OpenAPI validator's own check (@seriousme/openapi-schema-validator), which
 * keeps one `$dynamicAnchor` namespace for the whole document, follows `$ref`s inside vendor
 * extensions, and stops at the first problem (docs/decisions/openapi-documents.md).
 */

export interface PointedProblem {
  /** JSON pointer (RFC 6901) to where the problem is; '' for the whole document. */
  readonly pointer: string;
  readonly message: string;
}

/** The document's own address, for resolving relative references; never fetched. */
const DOCUMENT_URI = 'https://document.kennel.invalid/openapi';

/** Keys whose object value maps names (of properties, responses, media types…) to objects. */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'schemas',
  'responses',
  'parameters',
  'examples',
  'requestBodies',
  'headers',
  'securitySchemes',
  'links',
  'callbacks',
  'pathItems',
  'paths',
  'webhooks',
  'content',
  'encoding',
  'variables',
]);

/** Keys whose value is data (an instance, not a schema or an OpenAPI object): never followed. */
const DATA = new Set(['example', 'default', 'const', 'enum', 'value']);

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
const unescapePointer = (token: string) => token.replaceAll('~1', '/').replaceAll('~0', '~');

interface Reference {
  readonly ref: string;
  readonly base: string;
  readonly pointer: string;
  readonly dynamic: boolean;
}

const withoutFragment = (uri: string) => uri.split('#', 1)[0] as string;

/** Every reference problem of the document, in document order. */
export function referenceProblems(document: Record<string, unknown>): PointedProblem[] {
  const problems: PointedProblem[] = [];
  /** Resource URI (no fragment) → its root node. */
  const resources = new Map<string, unknown>([[DOCUMENT_URI, document]]);
  /** `resource#name` of each `$anchor` and `$dynamicAnchor`. */
  const anchors = new Set<string>();
  const dynamicAnchorNames = new Set<string>();
  const references: Reference[] = [];

  const anchor = (resource: string, name: unknown, pointer: string, keyword: string) => {
    if (typeof name !== 'string') return;
    const key = `${resource}#${name}`;
    if (anchors.has(key)) {
      problems.push({
        pointer,
        message: `${keyword} "${name}" is already defined in this schema resource: rename one of them, or give one of the schemas its own $id.`,
      });
    }
    anchors.add(key);
  };

  const walk = (node: unknown, pointer: string, base: string, keysAreNames: boolean): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        walk(item, `${pointer}/${index}`, base, false);
      });
      return;
    }
    const object = node as Record<string, unknown>;
    let resource = base;
    if (!keysAreNames) {
      if (typeof object.$id === 'string') {
        try {
          resource = withoutFragment(new URL(object.$id, base).href);
          if (resources.has(resource)) {
            problems.push({
              pointer: `${pointer}/$id`,
              message: `$id "${object.$id}" is already the $id of another schema: each $id names one schema.`,
            });
          } else resources.set(resource, object);
        } catch {
          problems.push({
            pointer: `${pointer}/$id`,
            message: `$id "${object.$id}" is not a URI reference.`,
          });
        }
      }
      anchor(resource, object.$anchor, `${pointer}/$anchor`, '$anchor');
      if (typeof object.$dynamicAnchor === 'string') {
        anchor(resource, object.$dynamicAnchor, `${pointer}/$dynamicAnchor`, '$dynamicAnchor');
        dynamicAnchorNames.add(object.$dynamicAnchor);
      }
      if (typeof object.$ref === 'string') {
        references.push({ ref: object.$ref, base: resource, pointer: `${pointer}/$ref`, dynamic: false });
      }
      if (typeof object.$dynamicRef === 'string') {
        references.push({
          ref: object.$dynamicRef,
          base: resource,
          pointer: `${pointer}/$dynamicRef`,
          dynamic: true,
        });
      }
    }
    for (const [key, value] of Object.entries(object)) {
      if (!keysAreNames && (key.startsWith('x-') || DATA.has(key))) continue;
      // A schema's `examples` is a list of instances; OpenAPI's is a map of Example Objects.
      if (!keysAreNames && key === 'examples' && Array.isArray(value)) continue;
      walk(value, `${pointer}/${escapePointer(key)}`, resource, !keysAreNames && NAME_MAPS.has(key));
    }
  };
  walk(document, '', DOCUMENT_URI, false);

  for (const reference of references) {
    const problem = resolveProblem(reference, resources, anchors, dynamicAnchorNames);
    if (problem) problems.push({ pointer: reference.pointer, message: problem });
  }
  return problems;
}

/** Whether a JSON pointer (with its leading slash) names a node of `root`. */
function pointsTo(root: unknown, pointer: string): boolean {
  let node = root;
  for (const token of pointer.slice(1).split('/').map(unescapePointer)) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, token)) return false;
    node = (node as Record<string, unknown>)[token];
  }
  return true;
}

/** Why a reference does not resolve within the document, or undefined when it does. */
function resolveProblem(
  { ref, base, dynamic }: Reference,
  resources: ReadonlyMap<string, unknown>,
  anchors: ReadonlySet<string>,
  dynamicAnchorNames: ReadonlySet<string>,
): string | undefined {
  const keyword = dynamic ? '$dynamicRef' : '$ref';
  let url: URL;
  try {
    url = new URL(ref, base);
  } catch {
    return `${keyword} "${ref}" is not a URI reference: write "#/components/…" for a part of this document.`;
  }
  const resource = withoutFragment(url.href);
  if (!resources.has(resource)) {
    return `${keyword} "${ref}" points outside this document; Kennel publishes one self-contained document. Bundle the referenced files into it first (e.g. \`npx @redocly/cli bundle openapi.yaml -o bundled.yaml\`), or point it at a part of this document.`;
  }
  let fragment: string;
  try {
    fragment = decodeURIComponent(url.hash.slice(1));
  } catch {
    return `${keyword} "${ref}" has a malformed %-escape in its fragment.`;
  }
  if (fragment === '') return undefined;
  if (fragment.startsWith('/')) {
    // Strictly, `#/components/…` inside a schema with an `$id` points into that schema; the
    // tools that write and read OpenAPI 3.1 (Scalar's Galaxy, Redocly, Swagger UI) read it as a
    // place in the document, so both are accepted.
    const roots = [resources.get(resource)];
    if (ref.startsWith('#')) roots.push(resources.get(DOCUMENT_URI));
    if (roots.some((root) => pointsTo(root, fragment))) return undefined;
    return `${keyword} "${ref}" points to nothing: this document has no ${fragment}. Add it, or correct the reference.`;
  }
  if (anchors.has(`${resource}#${fragment}`)) return undefined;
  // A dynamic reference resolves at validation time to the outermost schema in scope with that
  // $dynamicAnchor: any definition of the name may be the one.
  if (dynamic && dynamicAnchorNames.has(fragment)) return undefined;
  return `${keyword} "${ref}" names the anchor "${fragment}", which no schema in its resource defines (with $anchor or $dynamicAnchor).`;
}
