import { type PlatformConfig, platformSettings } from '../../config/index.ts';

/**
 * What a deployed document may grow to once parsed. The body limit bounds the text; these bound
 * what the text expands to (YAML aliases repeat a node without repeating its text), which is what
 * validating, storing, rendering and serving cost.
 */
export interface DocumentLimits {
  /** Bytes of the document as minified JSON, aliases expanded. */
  readonly maxExpandedBytes: number;
  readonly maxYamlAliases: number;
  /** Levels of nested objects and arrays, the document itself being level 1. */
  readonly maxDepth: number;
  readonly maxPaths: number;
  /** Operations of `paths` and `webhooks` together. */
  readonly maxOperations: number;
}

export function documentLimitsOf(config: PlatformConfig): DocumentLimits {
  return {
    maxExpandedBytes: config.deployMaxExpandedBytes,
    maxYamlAliases: config.deployMaxYamlAliases,
    maxDepth: config.deployMaxDepth,
    maxPaths: config.deployMaxPaths,
    maxOperations: config.deployMaxOperations,
  };
}

/** The settings' defaults, for callers without a configuration (tests, tools). */
export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = {
  maxExpandedBytes: platformSettings.deployMaxExpandedBytes.default,
  maxYamlAliases: platformSettings.deployMaxYamlAliases.default,
  maxDepth: platformSettings.deployMaxDepth.default,
  maxPaths: platformSettings.deployMaxPaths.default,
  maxOperations: platformSettings.deployMaxOperations.default,
};

/**
 * A document over a limit: refused as a whole, before it is validated or stored. Plain data, so it
 * crosses from the worker that found it.
 */
export interface LimitRefusal {
  readonly code: 'document_too_large' | 'document_too_complex';
  readonly message: string;
}

/** Each limit: its error code, its setting, and how the message words the document's value. */
const LIMITS = {
  expandedBytes: {
    code: 'document_too_large',
    setting: 'DEPLOY_MAX_EXPANDED_SIZE',
    says: (value: string, max: number) =>
      `The document is ${value} bytes as JSON once parsed (YAML aliases expanded); the limit is ${max} bytes.`,
  },
  yamlAliases: {
    code: 'document_too_complex',
    setting: 'DEPLOY_MAX_YAML_ALIASES',
    says: (value: string, max: number) =>
      `The YAML document uses ${value} aliases; the limit is ${max}. Write the repeated parts out, or use $ref.`,
  },
  nestedYamlAliases: {
    code: 'document_too_complex',
    setting: 'DEPLOY_MAX_YAML_ALIASES',
    says: (value: string, max: number) =>
      `The YAML document's ${value} aliases repeat anchors that hold aliases themselves, which multiplies them past the limit of ${max}. Write the repeated parts out, or use $ref.`,
  },
  depth: {
    code: 'document_too_complex',
    setting: 'DEPLOY_MAX_DEPTH',
    says: (value: string, max: number) =>
      `The document nests ${value} levels of objects and arrays; the limit is ${max}.`,
  },
  paths: {
    code: 'document_too_complex',
    setting: 'DEPLOY_MAX_PATHS',
    says: (value: string, max: number) => `The document has ${value} paths; the limit is ${max}.`,
  },
  operations: {
    code: 'document_too_complex',
    setting: 'DEPLOY_MAX_OPERATIONS',
    says: (value: string, max: number) => `The document has ${value} operations; the limit is ${max}.`,
  },
} as const;

export type LimitName = keyof typeof LIMITS;

export function limitRefusal(limit: LimitName, value: number | string, max: number): LimitRefusal {
  const { code, setting, says } = LIMITS[limit];
  return {
    code,
    message: `${says(String(value), max)} Nothing was stored. Make the document smaller, or ask the platform's operator to raise ${setting}.`,
  };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function operationCount(items: unknown): number {
  if (items === null || typeof items !== 'object') return 0;
  let count = 0;
  for (const item of Object.values(items)) {
    if (item === null || typeof item !== 'object') continue;
    for (const key of Object.keys(item)) if (METHODS.has(key)) count += 1;
  }
  return count;
}

/**
 * The first limit a parsed document exceeds, or undefined. Its size is measured without building
 * the JSON text: a subtree reached many times through aliases is measured once (a DAG is walked in
 * time linear in its distinct nodes), and a cycle (an alias inside its own anchor) is too deep.
 */
export function checkDocumentLimits(value: unknown, limits: DocumentLimits): LimitRefusal | undefined {
  const measured = measureJson(value, limits.maxDepth);
  if (measured === 'too deep') return limitRefusal('depth', `more than ${limits.maxDepth}`, limits.maxDepth);
  if (measured > limits.maxExpandedBytes) {
    return limitRefusal('expandedBytes', measured, limits.maxExpandedBytes);
  }
  const document = value as Record<string, unknown>;
  const paths = document.paths;
  const pathCount = paths !== null && typeof paths === 'object' ? Object.keys(paths).length : 0;
  if (pathCount > limits.maxPaths) return limitRefusal('paths', pathCount, limits.maxPaths);
  const operations = operationCount(paths) + operationCount(document.webhooks);
  if (operations > limits.maxOperations) {
    return limitRefusal('operations', operations, limits.maxOperations);
  }
  return undefined;
}

/**
 * Escaped in a JSON string (quote, backslash, control characters, lone surrogates): a string
 * holding one is measured by serialising it.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON escapes exactly these characters.
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

function stringBytes(text: string): number {
  return ESCAPED.test(text) ? Buffer.byteLength(JSON.stringify(text)) : Buffer.byteLength(text) + 2;
}

/**
 * `Buffer.byteLength(JSON.stringify(value))` of a parsed JSON/YAML value, computed without the
 * text, or 'too deep' past `maxDepth` levels (a cycle included).
 */
export function measureJson(value: unknown, maxDepth: number): number | 'too deep' {
  // Per object: its bytes and its height (levels from it down), so a subtree met again through
  // an alias costs one lookup, wherever it is met.
  const measured = new WeakMap<object, { bytes: number; height: number }>();
  const open = new WeakSet<object>();
  let height = 0;
  /** The bytes of `node` met at `depth`; sets `height` to the node's height. */
  const measure = (node: unknown, depth: number): number => {
    height = 0;
    if (typeof node === 'string') return stringBytes(node);
    if (node === null || node === undefined) return 4;
    if (typeof node === 'number') return Number.isFinite(node) ? String(node).length : 4;
    if (typeof node === 'boolean') return node ? 4 : 5;
    if (typeof node !== 'object') return Buffer.byteLength(JSON.stringify(node) ?? 'null');
    if (depth > maxDepth || open.has(node)) throw TOO_DEEP;
    const known = measured.get(node);
    if (known !== undefined) {
      if (depth + known.height - 1 > maxDepth) throw TOO_DEEP;
      height = known.height;
      return known.bytes;
    }
    open.add(node);
    let bytes = 2;
    let below = 0;
    if (Array.isArray(node)) {
      for (const item of node) {
        bytes += measure(item, depth + 1) + 1;
        below = Math.max(below, height);
      }
      if (node.length > 0) bytes -= 1;
    } else if (typeof (node as { toJSON?: unknown }).toJSON === 'function') {
      bytes = Buffer.byteLength(JSON.stringify(node));
    } else {
      let members = 0;
      for (const [key, item] of Object.entries(node)) {
        if (item === undefined || typeof item === 'function') continue;
        bytes += stringBytes(key) + 1 + measure(item, depth + 1) + 1;
        below = Math.max(below, height);
        members += 1;
      }
      if (members > 0) bytes -= 1;
    }
    open.delete(node);
    height = below + 1;
    measured.set(node, { bytes, height });
    return bytes;
  };
  try {
    return measure(value, 1);
  } catch (error) {
    if (error === TOO_DEEP) return 'too deep';
    throw error;
  }
}

const TOO_DEEP = Symbol('too deep');
