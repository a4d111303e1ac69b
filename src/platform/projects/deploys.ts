import { Validator } from '@seriousme/openapi-schema-validator';
import { parse as parseYaml } from 'yaml';
import { transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
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

/** At most 5 MiB of document: larger ones are refused by the API's body limit anyway. */
export const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;

interface Parsed {
  format: 'json' | 'yaml';
  document: Record<string, unknown> | null;
  problems: string[];
}

/**
 * Reads an OpenAPI 3.0.x or 3.1.x document from JSON or YAML text and validates it against its
 * version's schema (the validator picks it from `openapi`; 3.1 brings `webhooks` and JSON Schema
 * 2020-12 schemas, and a document may have webhooks and no paths).
 */
export async function readOpenApiDocument(source: string): Promise<Parsed> {
  const trimmed = source.trimStart();
  const format = trimmed.startsWith('{') ? 'json' : 'yaml';
  let value: unknown;
  try {
    value = format === 'json' ? JSON.parse(source) : parseYaml(source, { maxAliasCount: 100 });
  } catch (error) {
    return {
      format,
      document: null,
      problems: [`The document is not valid ${format.toUpperCase()}: ${(error as Error).message}`],
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { format, document: null, problems: ['The document must be an object with an `openapi` field.'] };
  }
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
  return { format, document, problems: [] };
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
  const parsed = await readOpenApiDocument(input.document);
  const status: DeployStatus = parsed.document ? 'succeeded' : 'failed';
  const deploy = await transact(ctx.db, async (trx) => {
    const row = await trx
      .insertInto('deploys')
      .values({
        project_id: project.id,
        status,
        origin_url: originUrl,
        document: parsed.document ? JSON.stringify(parsed.document) : null,
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
