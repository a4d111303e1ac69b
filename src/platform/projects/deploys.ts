import { availableParallelism } from 'node:os';
import { Validator } from '@seriousme/openapi-schema-validator';
import { parseDocument as parseYamlDocument, visit as visitYaml } from 'yaml';
import { pathTemplateProblems } from '../../lib/operation-matcher.ts';
import { WorkerPool } from '../../lib/worker-pool.ts';
import { transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import {
  checkDocumentLimits,
  DEFAULT_DOCUMENT_LIMITS,
  type DocumentLimits,
  documentLimitsOf,
  type LimitRefusal,
  limitRefusal,
} from './document-limits.ts';
import { checkOriginUrl, projectFor } from './projects.ts';

export type DeployStatus = 'succeeded' | 'failed';

export interface Deploy {
  id: number;
  projectSlug: string;
  status: DeployStatus;
  originUrl: string;
  sourceFormat: 'json' | 'yaml';
  /** The validator's messages for a failed deploy. */
  problems: string[];
  active: boolean;
  createdAt: string;
}

interface Parsed {
  format: 'json' | 'yaml';
  document: Record<string, unknown> | null;
  problems: string[];
  /** Set when the document exceeds a limit: refused, neither validated nor stored. */
  refusal?: LimitRefusal;
}

/** Thrown while reading YAML past a limit on aliases. */
class YamlAliasLimit {
  readonly refusal: LimitRefusal;
  constructor(refusal: LimitRefusal) {
    this.refusal = refusal;
  }
}

/**
 * YAML text as a value, aliases limited twice with the library's own controls: the document may
 * hold at most `maxYamlAliases` alias nodes, and `maxAliasCount` stops expansion through nested
 * anchors (yaml counts an alias by the aliases inside what it repeats).
 */
function readYaml(source: string, limits: DocumentLimits): unknown {
  const document = parseYamlDocument(source);
  if (document.errors.length > 0) throw document.errors[0];
  let aliases = 0;
  visitYaml(document, {
    Alias() {
      aliases += 1;
    },
  });
  if (aliases > limits.maxYamlAliases) {
    throw new YamlAliasLimit(limitRefusal('yamlAliases', aliases, limits.maxYamlAliases));
  }
  try {
    // yaml counts the anchored node as one use of it, and each alias as one more.
    return document.toJS({ maxAliasCount: limits.maxYamlAliases + 1 });
  } catch (error) {
    if (error instanceof ReferenceError && /Excessive alias count/.test(error.message)) {
      throw new YamlAliasLimit(limitRefusal('nestedYamlAliases', aliases, limits.maxYamlAliases));
    }
    throw error;
  }
}

/**
 * Reads an OpenAPI 3.0.x or 3.1.x document from JSON or YAML text and validates it against its
 * version's schema (the validator picks it from `openapi`; 3.1 brings `webhooks` and JSON Schema
 * 2020-12 schemas, and a document may have webhooks and no paths).
 */
export async function readOpenApiDocument(
  source: string,
  limits: DocumentLimits = DEFAULT_DOCUMENT_LIMITS,
): Promise<Parsed> {
  const trimmed = source.trimStart();
  const format = trimmed.startsWith('{') ? 'json' : 'yaml';
  let value: unknown;
  try {
    value = format === 'json' ? JSON.parse(source) : readYaml(source, limits);
  } catch (error) {
    if (error instanceof YamlAliasLimit)
      return { format, document: null, problems: [], refusal: error.refusal };
    return {
      format,
      document: null,
      problems: [`The document is not valid ${format.toUpperCase()}: ${(error as Error).message}`],
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { format, document: null, problems: ['The document must be an object with an `openapi` field.'] };
  }
  // Before validation, whose cost grows with the document: what is over a limit is never worked on.
  const refusal = checkDocumentLimits(value, limits);
  if (refusal) return { format, document: null, problems: [], refusal };
  const document = value as Record<string, unknown>;
  const version = document.openapi;
  if (typeof version !== 'string' || !/^3\.[01]\.\d+$/.test(version)) {
    return {
      format,
      document: null,
      problems: [
        `openapi is ${JSON.stringify(version ?? null)}; Kennel publishes OpenAPI 3.0.x and 3.1.x documents (e.g. "3.0.3" or "3.1.1").`,
      ],
    };
  }
  const result = await new Validator().validate(document);
  if (!result.valid) {
    const errors = (Array.isArray(result.errors) ? result.errors : [result.errors]) as {
      instancePath?: string;
      message?: string;
      params?: Record<string, unknown>;
    }[];
    const problems = errors.slice(0, 50).map((e) => {
      const extra =
        e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : '';
      return `${e.instancePath || '/'}: ${e.message ?? 'is not valid'}${extra}`;
    });
    return { format, document: null, problems: [...new Set(problems)] };
  }
  // Templates the edge's operation matcher could not serve unambiguously (src/lib/operation-matcher.ts).
  const templates = pathTemplateProblems(document.paths);
  if (templates.length > 0) return { format, document: null, problems: templates.slice(0, 50) };
  return { format, document, problems: [] };
}

/** What the reading worker answers: the document as the JSON text to store, when it is valid. */
export interface ReadDocument {
  format: 'json' | 'yaml';
  json: string | null;
  problems: string[];
  refusal?: LimitRefusal;
}

/**
 * The threads that read deployed documents: a big one takes seconds to parse and validate, which
 * must not stall the event loop every tenant is served from (docs/security.md). Process-wide like
 * libuv's thread pool, and, like it, holding no thread until used: threads start with the first
 * deploy and end after a minute idle.
 */
const documentReaders = new WorkerPool<{ source: string; limits: DocumentLimits }, ReadDocument>(
  new URL('./read-document-worker.ts', import.meta.url),
  { size: Math.min(2, availableParallelism()), idleMs: 60_000, nice: 10 },
);

/**
 * Which deploys a project keeps when it deploys again, as rules any one of which keeps a deploy:
 * the live one, and the latest `retention` (by id, newest first). Rules for other kinds of deploy
 * (previews) join this table.
 */
const KEEP_RULES: readonly ((
  deploy: { id: number; rank: number; activeId: number | null },
  retention: number,
) => boolean)[] = [({ id, activeId }) => id === activeId, ({ rank }, retention) => rank < retention];

/** The ids of a project's deploys (newest first) that no keep rule keeps. */
export function deploysToPrune(
  idsNewestFirst: readonly number[],
  activeId: number | null,
  retention: number,
): number[] {
  return idsNewestFirst.filter(
    (id, rank) => !KEEP_RULES.some((keeps) => keeps({ id, rank, activeId }, retention)),
  );
}

function toDeploy(
  slug: string,
  activeId: number | null,
  row: {
    id: number;
    status: string;
    origin_url: string;
    source_format: string;
    problems: string | null;
    created_at: string;
  },
): Deploy {
  return {
    id: row.id,
    projectSlug: slug,
    status: row.status as DeployStatus,
    originUrl: row.origin_url,
    sourceFormat: row.source_format as 'json' | 'yaml',
    problems: row.problems ? (JSON.parse(row.problems) as string[]) : [],
    active: row.id === activeId,
    createdAt: row.created_at,
  };
}

/**
 * Deploys a project: the document is validated and stored as an immutable deploy. A valid one
 * becomes the active deploy (and its origin the project's); an invalid one is kept as a failed
 * deploy carrying the validator's messages, and the active deploy does not change.
 */
export async function deployProject(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  input: { document: string; originUrl?: string },
): Promise<Deploy> {
  const project = await projectFor(ctx, actor, slug);
  const originUrl = input.originUrl === undefined ? project.originUrl : checkOriginUrl(input.originUrl);
  const parsed = await documentReaders.run({
    source: input.document,
    limits: documentLimitsOf(ctx.config),
  });
  if (parsed.refusal) throw platformErrors.error(parsed.refusal.code, parsed.refusal.message);
  const status: DeployStatus = parsed.json !== null ? 'succeeded' : 'failed';
  const deploy = await transact(ctx.db, async (trx) => {
    const row = await trx
      .insertInto('deploys')
      .values({
        project_id: project.id,
        status,
        origin_url: originUrl,
        document: parsed.json,
        source_format: parsed.format,
        problems: parsed.problems.length > 0 ? JSON.stringify(parsed.problems) : null,
        created_by: actor.userId,
        created_at: ctx.clock.now().toISOString(),
      })
      .returning(['id', 'status', 'origin_url', 'source_format', 'problems', 'created_at'])
      .executeTakeFirstOrThrow();
    let activeId = project.activeDeployId;
    if (status === 'succeeded') {
      activeId = row.id;
      await trx
        .updateTable('projects')
        .set({ active_deploy_id: row.id, origin_url: originUrl })
        .where('id', '=', project.id)
        .execute();
    }
    // Pruned with the deploy that makes them old, so a project never holds more than it keeps.
    const ids = await trx
      .selectFrom('deploys')
      .select('id')
      .where('project_id', '=', project.id)
      .orderBy('id', 'desc')
      .execute();
    const pruned = deploysToPrune(
      ids.map((r) => Number(r.id)),
      activeId,
      ctx.config.deployRetention,
    );
    if (pruned.length > 0) await trx.deleteFrom('deploys').where('id', 'in', pruned).execute();
    return toDeploy(slug, activeId, row);
  });
  if (deploy.active) ctx.changes.publish({ kind: 'deploys', projectId: project.id });
  return deploy;
}

export async function listDeploys(ctx: PlatformContext, actor: Actor, slug: string): Promise<Deploy[]> {
  const project = await projectFor(ctx, actor, slug);
  const rows = await ctx.db
    .selectFrom('deploys')
    .select(['id', 'status', 'origin_url', 'source_format', 'problems', 'created_at'])
    .where('project_id', '=', project.id)
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => toDeploy(slug, project.activeDeployId, r));
}

export async function readDeploy(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  id: number,
): Promise<Deploy> {
  const project = await projectFor(ctx, actor, slug);
  const row = await ctx.db
    .selectFrom('deploys')
    .select(['id', 'status', 'origin_url', 'source_format', 'problems', 'created_at'])
    .where('project_id', '=', project.id)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) {
    throw platformErrors.error(
      'deploy_not_found',
      `Project ${slug} has no deploy ${id}: check the id against the project's list of deploys.`,
    );
  }
  return toDeploy(slug, project.activeDeployId, row);
}

/** The active deploy's document, for the published site. */
export async function activeDocument(
  ctx: PlatformContext,
  projectId: number,
): Promise<Record<string, unknown> | undefined> {
  const row = await ctx.db
    .selectFrom('projects')
    .innerJoin('deploys', 'deploys.id', 'projects.active_deploy_id')
    .select(['deploys.document'])
    .where('projects.id', '=', projectId)
    .executeTakeFirst();
  return row?.document ? (JSON.parse(row.document) as Record<string, unknown>) : undefined;
}
