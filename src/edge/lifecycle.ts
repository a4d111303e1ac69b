import { availableParallelism } from 'node:os';
import { OPERATION_METHODS, type OperationMatch, OperationMatcher } from '../lib/operation-matcher.ts';
import { WorkerPool } from '../lib/worker-pool.ts';
import type { PlatformDb } from '../platform/context.ts';
import { readDeployDocument } from '../platform/publishing/index.ts';
import { type CredentialSource, credentialSources } from './traffic/identify-caller.ts';

/**
 * The deprecation lifecycle a deployed document declares, enforced at the edge for every project:
 * an operation marked `deprecated: true` with a sunset date (`x-sunset`, or GitBook's
 * `x-deprecated-sunset`) gets `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and, when the
 * document names one in `x-successor`, `Link: <…>; rel="successor-version"` on every answer the
 * origin does not already mark; from its sunset on, the edge answers 410 itself.
 *
 * The deprecation date is the operation's `x-deprecated-at` (or `x-deprecation-date`) when given,
 * else when the deploy was made (the first moment the platform knew). `x-successor` is a path of
 * the same API (it may carry a query, and `{name}` placeholders filled from the matched path).
 */
export interface LifecycleHeaders {
  readonly deprecation: string;
  readonly sunset: string;
  /** The successor as the site serves it (under `/api`), or undefined. */
  readonly link: string | undefined;
}

interface Rule {
  readonly sunsetAt: number;
  readonly deprecation: string;
  readonly sunset: string;
  readonly successor: string | undefined;
}

export interface LifecycleMatch extends LifecycleHeaders {
  /** Whether the sunset has passed: the edge answers 410 without calling the origin. */
  readonly gone: boolean;
}

const parseDate = (value: unknown): number | undefined => {
  if (typeof value !== 'string' && !(value instanceof Date)) return undefined;
  const at = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isFinite(at) ? at : undefined;
};

/**
 * A successor the edge will put in a Link header: a path of visible ASCII without the characters
 * that would end the link target or the header (the document is the tenant's to write).
 */
const plainPath = (text: string) =>
  text.startsWith('/') && [...text].every((c) => c > ' ' && c <= '~' && !'<>"\\'.includes(c));
const LINK_UNSAFE = /[<>"\\]/g;

/** The rule of a deprecated operation with a sunset date, or null for any other operation. */
function ruleOf(operation: Record<string, unknown>, deployedAt: Date): Rule | null {
  if (operation.deprecated !== true) return null;
  const sunsetAt = parseDate(operation['x-sunset'] ?? operation['x-deprecated-sunset']);
  if (sunsetAt === undefined) return null;
  const deprecatedAt =
    parseDate(operation['x-deprecated-at'] ?? operation['x-deprecation-date']) ?? deployedAt.getTime();
  const successor = operation['x-successor'];
  return {
    sunsetAt,
    deprecation: `@${Math.floor(deprecatedAt / 1000)}`,
    sunset: new Date(sunsetAt).toUTCString(),
    successor: typeof successor === 'string' && plainPath(successor) ? successor : undefined,
  };
}

/** An operation as the edge knows it: its traffic key (`GET /pets/{petId}`) and its lifecycle. */
export interface DeployOperation {
  readonly key: string;
  readonly rule: Rule | null;
}

/**
 * What the edge reads of one deploy's document: its operations, matched by the one operation
 * matcher (src/lib/operation-matcher.ts) for both the lifecycle and traffic attribution, and
 * where its callers put their credential (traffic's caller identity). The matcher covers every
 * operation, so a concrete path that is not deprecated wins over a deprecated template. `none`
 * for a document without operations or credentials.
 */
export class LifecycleRules {
  static readonly none = new LifecycleRules(undefined, false, []);
  readonly #matcher: OperationMatcher<DeployOperation> | undefined;
  readonly #deprecated: boolean;
  /** Where callers put their credential, in the document's order (empty: callers by address). */
  readonly credentials: readonly CredentialSource[];

  private constructor(
    matcher: OperationMatcher<DeployOperation> | undefined,
    deprecated: boolean,
    credentials: readonly CredentialSource[],
  ) {
    this.#matcher = matcher;
    this.#deprecated = deprecated;
    this.credentials = credentials;
  }

  static from(document: Record<string, unknown>, deployedAt: Date): LifecycleRules {
    let deprecated = false;
    const matcher = OperationMatcher.fromDocument(document, (operation, method, template) => {
      const rule = ruleOf(operation, deployedAt);
      if (rule) deprecated = true;
      return { key: `${method.toUpperCase()} ${template}`, rule };
    });
    const credentials = credentialSources(document);
    return matcher.size === 0 && credentials.length === 0
      ? LifecycleRules.none
      : new LifecycleRules(matcher.size === 0 ? undefined : matcher, deprecated, credentials);
  }

  /** Whether no operation has a lifecycle (then `match` answers undefined for every request). */
  get empty(): boolean {
    return !this.#deprecated;
  }

  /** The operation `method path` is for (path under the API, normalised, without its query). */
  find(method: string, path: string): OperationMatch<DeployOperation> | undefined {
    return this.#matcher?.match(method, path);
  }

  /** The lifecycle of the operation `method path` (path under the API, normalised, without its query). */
  match(method: string, path: string, now: number): LifecycleMatch | undefined {
    return this.lifecycleOf(this.find(method, path), now);
  }

  /** The lifecycle of an operation `find` answered. */
  lifecycleOf(found: OperationMatch<DeployOperation> | undefined, now: number): LifecycleMatch | undefined {
    const rule = found?.operation.rule;
    if (!found || !rule) return undefined;
    let link: string | undefined;
    if (rule.successor !== undefined) {
      const target = rule.successor.replace(/\{([^}/]+)\}/g, (_, name: string) =>
        Object.hasOwn(found.params, name)
          ? (found.params[name] as string).replace(LINK_UNSAFE, encodeURIComponent)
          : '',
      );
      link = `</api${target}>; rel="successor-version"`;
    }
    return { deprecation: rule.deprecation, sunset: rule.sunset, link, gone: now >= rule.sunsetAt };
  }
}

/** The fields of an operation the lifecycle reads. */
const LIFECYCLE_FIELDS = [
  'deprecated',
  'x-sunset',
  'x-deprecated-sunset',
  'x-deprecated-at',
  'x-deprecation-date',
  'x-successor',
] as const;

/** The fields of a security scheme traffic's caller identity reads (./traffic/identify-caller.ts). */
const SCHEME_FIELDS = ['type', 'in', 'name', 'scheme'] as const;

function schemesSkeleton(schemes: unknown): Record<string, Record<string, unknown>> {
  const kept: Record<string, Record<string, unknown>> = {};
  if (schemes === null || typeof schemes !== 'object') return kept;
  for (const [name, scheme] of Object.entries(schemes as Record<string, unknown>)) {
    if (scheme === null || typeof scheme !== 'object') continue;
    const fields: Record<string, unknown> = {};
    for (const field of SCHEME_FIELDS) {
      const value = (scheme as Record<string, unknown>)[field];
      if (typeof value === 'string') fields[field] = value;
    }
    kept[name] = fields;
  }
  return kept;
}

/**
 * A stored document reduced to what the edge reads: every operation (the matcher needs them all)
 * with only its lifecycle fields, and its security schemes' type and place. Parsing a big
 * document takes a second: it runs in a worker thread (read-lifecycle-worker.ts), and only the
 * small skeleton crosses to the event loop.
 */
export function lifecycleSkeleton(documentJson: string): Record<string, unknown> {
  const document = JSON.parse(documentJson) as {
    paths?: unknown;
    components?: { securitySchemes?: unknown } | null;
    securityDefinitions?: unknown;
  };
  const paths: Record<string, Record<string, Record<string, unknown>>> = {};
  if (document.paths !== null && typeof document.paths === 'object') {
    for (const [template, item] of Object.entries(document.paths as Record<string, unknown>)) {
      if (item === null || typeof item !== 'object') continue;
      const operations: Record<string, Record<string, unknown>> = {};
      for (const method of OPERATION_METHODS) {
        const operation = (item as Record<string, unknown>)[method];
        if (operation === null || typeof operation !== 'object') continue;
        const kept: Record<string, unknown> = {};
        for (const field of LIFECYCLE_FIELDS) {
          if (field in operation) kept[field] = (operation as Record<string, unknown>)[field];
        }
        operations[method] = kept;
      }
      paths[template] = operations;
    }
  }
  const components = document.components;
  return {
    paths,
    components: {
      securitySchemes: schemesSkeleton(
        typeof components === 'object' ? components?.securitySchemes : undefined,
      ),
    },
    securityDefinitions: schemesSkeleton(document.securityDefinitions),
  };
}

/** The threads reducing stored documents to their lifecycle skeleton; idle-ending like the others. */
const skeletonReaders = new WorkerPool<{ document: string }, Record<string, unknown>>(
  new URL('./read-lifecycle-worker.ts', import.meta.url),
  { size: Math.min(2, availableParallelism()), idleMs: 60_000, nice: 10 },
);

/** The deploy a route serves, as the lifecycle cache keys it. */
interface RoutedDeploy {
  readonly projectId: number;
  readonly deployId: number;
}

/**
 * Lifecycle rules by deploy id, read once per deploy (deploys never change). Answered without a
 * promise once read, so a request for an operation that is not deprecated pays a map lookup. A
 * project's entries go when its live deploy changes (`deployed`), so old deploys are not kept.
 */
export class LifecycleCache {
  readonly #db: PlatformDb;
  readonly #entries = new Map<
    number,
    { projectId: number; rules: LifecycleRules | Promise<LifecycleRules> }
  >();

  constructor(db: PlatformDb) {
    this.#db = db;
  }

  get size(): number {
    return this.#entries.size;
  }

  get({ projectId, deployId }: RoutedDeploy): LifecycleRules | Promise<LifecycleRules> {
    const cached = this.#entries.get(deployId);
    if (cached !== undefined) return cached.rules;
    if (this.#entries.size > 1000) this.#entries.clear();
    const loading = this.#load(deployId).then(
      (rules) => {
        if (this.#entries.get(deployId)?.rules === loading) this.#entries.set(deployId, { projectId, rules });
        return rules;
      },
      (error: unknown) => {
        // Not remembered: the next request tries again.
        this.#entries.delete(deployId);
        throw error;
      },
    );
    this.#entries.set(deployId, { projectId, rules: loading });
    return loading;
  }

  /** A project's live deploy changed (projectId 0: anything may have): its entries go. */
  deployed(projectId: number): void {
    for (const [deployId, entry] of this.#entries) {
      if (projectId === 0 || entry.projectId === projectId) this.#entries.delete(deployId);
    }
  }

  async #load(deployId: number): Promise<LifecycleRules> {
    const row = await readDeployDocument(this.#db, deployId);
    if (!row) return LifecycleRules.none;
    const skeleton = await skeletonReaders.run({ document: row.document });
    return LifecycleRules.from(skeleton, new Date(row.createdAt));
  }
}
