import { availableParallelism } from 'node:os';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { ValidateFunction } from 'ajv';
import { LineCounter, parseDocument as parseYamlDocument, visit as visitYaml } from 'yaml';
import type { Change } from '../../lib/openapi-diff/index.ts';
import { pathTemplateProblems } from '../../lib/operation-matcher.ts';
import { WorkerPool } from '../../lib/worker-pool.ts';
import { transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { DeployStatus, SourceFormat } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import { addTraffic } from '../traffic/read-operation-traffic.ts';
import { type PointedProblem, referenceProblems } from './check-references.ts';
import {
  type DeployFacts,
  type DeployRow,
  deployFacts,
  deployNotFound,
  selectDeploys,
} from './deploy-records.ts';
import {
  checkDocumentLimits,
  DEFAULT_DOCUMENT_LIMITS,
  type DocumentLimits,
  documentLimitsOf,
  type LimitRefusal,
  limitRefusal,
} from './document-limits.ts';
import {
  locateProblems,
  MAX_PROBLEMS,
  type ProblemDetail,
  problemText,
  schemaProblems,
} from './document-problems.ts';
import {
  changesAgainstLive,
  LiveDeployMoved,
  lockProject,
  makeLive,
  refuseBreaking,
  withSettledLiveDeploy,
} from './go-live.ts';
import { checkOriginUrl, projectFor } from './projects.ts';
import { type DeployChanges, NO_CHANGES } from './stored-documents.ts';

export type { DeployStatus } from '../db-schema.ts';

export interface Deploy {
  id: number;
  projectSlug: string;
  status: DeployStatus;
  originUrl: string;
  sourceFormat: 'json' | 'yaml';
  /** A failed deploy's problems, one line of text each (`problemDetails` as text). */
  problems: string[];
  /** A failed deploy's problems, each with its JSON pointer and line and column in the text. */
  problemDetails: ProblemDetail[];
  active: boolean;
  createdAt: string;
}

interface Parsed {
  format: 'json' | 'yaml';
  document: Record<string, unknown> | null;
  /** Every problem found, each with its place (JSON pointer, line, column); empty when valid. */
  problems: ProblemDetail[];
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
 * anchors (yaml counts an alias by the aliases inside what it repeats). Syntax errors are all
 * reported, with their lines.
 */
function readYaml(source: string, limits: DocumentLimits): { value: unknown } | ProblemDetail[] {
  const lines = new LineCounter();
  const document = parseYamlDocument(source, { lineCounter: lines });
  if (document.errors.length > 0) {
    return document.errors.slice(0, MAX_PROBLEMS).map((error) => ({
      pointer: '',
      line: error.linePos?.[0].line ?? null,
      column: error.linePos?.[0].col ?? null,
      message: `The document is not valid YAML: ${error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '')}.`,
    }));
  }
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
    return { value: document.toJS({ maxAliasCount: limits.maxYamlAliases + 1 }) };
  } catch (error) {
    if (error instanceof ReferenceError && /Excessive alias count/.test(error.message)) {
      throw new YamlAliasLimit(limitRefusal('nestedYamlAliases', aliases, limits.maxYamlAliases));
    }
    throw error;
  }
}

/** JSON text as a value, or its syntax error with the line and column node reports. */
function readJson(source: string): { value: unknown } | ProblemDetail[] {
  try {
    return { value: JSON.parse(source) };
  } catch (error) {
    const message = (error as Error).message;
    const at = /\(line (\d+) column (\d+)\)/.exec(message);
    return [
      {
        pointer: '',
        line: at ? Number(at[1]) : null,
        column: at ? Number(at[2]) : null,
        message: `The document is not valid JSON: ${message.replace(/ in JSON at position \d+/, '').replace(/ \(line \d+ column \d+\)/, '')}.`,
      },
    ];
  }
}

const whole = (message: string): ProblemDetail[] => [{ pointer: '', line: null, column: null, message }];

/**
 * The OpenAPI schemas (3.0's draft-04, 3.1's 2020-12), compiled once per thread: compiling takes
 * longer than validating most documents. allErrors, so a document's problems come all at once.
 */
const openApiSchemas = new Map<string, ValidateFunction>();
function openApiSchema(version: '3.0' | '3.1'): ValidateFunction {
  let validate = openApiSchemas.get(version);
  if (!validate) {
    // The validator's compiled schema, without its own reference check (check-references.ts).
    const validator = new Validator({ allErrors: true }) as unknown as {
      getAjvValidator(version: string): ValidateFunction;
    };
    validate = validator.getAjvValidator(version);
    openApiSchemas.set(version, validate);
  }
  return validate;
}

/**
 * Reads an OpenAPI 3.0.x or 3.1.x document from JSON or YAML text and validates it: against its
 * version's schema (3.1 brings `webhooks` and JSON Schema 2020-12 schemas, and a document may
 * have webhooks and no paths), its references (check-references.ts), and its path templates. Every
 * problem is reported at once, with its JSON pointer and its line and column in the text.
 */
export async function readOpenApiDocument(
  source: string,
  limits: DocumentLimits = DEFAULT_DOCUMENT_LIMITS,
): Promise<Parsed> {
  const trimmed = source.trimStart();
  const format = trimmed.startsWith('{') ? 'json' : 'yaml';
  let read: { value: unknown } | ProblemDetail[];
  try {
    read = format === 'json' ? readJson(source) : readYaml(source, limits);
  } catch (error) {
    if (error instanceof YamlAliasLimit)
      return { format, document: null, problems: [], refusal: error.refusal };
    return {
      format,
      document: null,
      problems: whole(`The document is not valid YAML: ${(error as Error).message}`),
    };
  }
  if (Array.isArray(read)) return { format, document: null, problems: read };
  const { value } = read;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      format,
      document: null,
      problems: whole('The document must be an object with an `openapi` field.'),
    };
  }
  // Before validation, whose cost grows with the document: what is over a limit is never worked on.
  const refusal = checkDocumentLimits(value, limits);
  if (refusal) return { format, document: null, problems: [], refusal };
  const document = value as Record<string, unknown>;
  const version = document.openapi;
  if (typeof version !== 'string' || !/^3\.[01]\.\d+$/.test(version)) {
    const problem: PointedProblem = {
      pointer: version === undefined ? '' : '/openapi',
      message: `openapi is ${JSON.stringify(version ?? null)}; Kennel publishes OpenAPI 3.0.x and 3.1.x documents (e.g. "3.0.3" or "3.1.1").`,
    };
    return { format, document: null, problems: locateProblems(source, format, [problem]) };
  }
  const validate = openApiSchema(version.startsWith('3.0') ? '3.0' : '3.1');
  const found: PointedProblem[] = [];
  if (!validate(document)) found.push(...schemaProblems(validate.errors ?? [], document));
  found.push(...referenceProblems(document));
  // Templates the edge's operation matcher could not serve unambiguously (src/lib/operation-matcher.ts).
  for (const text of pathTemplateProblems(document.paths)) {
    const split = text.indexOf(': ');
    found.push({ pointer: text.slice(0, split), message: text.slice(split + 2) });
  }
  if (found.length > 0) {
    return {
      format,
      document: null,
      problems: locateProblems(source, format, found.slice(0, MAX_PROBLEMS)),
    };
  }
  return { format, document, problems: [] };
}

/** What the reading worker answers: the document as the JSON text to store, when it is valid. */
export interface ReadDocument {
  format: 'json' | 'yaml';
  json: string | null;
  problems: ProblemDetail[];
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
 * Previews kept whatever the retention: their reviewers hold links to them (share links,
 * src/platform/previews/), so a busy project's ordinary deploys do not push them out.
 */
export const PREVIEWS_KEPT = 10;

/**
 * Which deploys a project keeps when it deploys again, as rules any one of which keeps a deploy:
 * the live one, the latest `retention` (by id, newest first), and the latest PREVIEWS_KEPT
 * previews (`previewRank`: the rank among the project's previews, newest first).
 */
const KEEP_RULES: readonly ((
  deploy: { id: number; rank: number; previewRank: number | undefined; activeId: number | null },
  retention: number,
) => boolean)[] = [
  ({ id, activeId }) => id === activeId,
  ({ rank }, retention) => rank < retention,
  ({ previewRank }) => previewRank !== undefined && previewRank < PREVIEWS_KEPT,
];

/** The ids of a project's deploys (newest first) that no keep rule keeps; `previewIds`: its previews. */
export function deploysToPrune(
  idsNewestFirst: readonly number[],
  activeId: number | null,
  retention: number,
  previewIds: ReadonlySet<number> = new Set(),
): number[] {
  let previews = 0;
  return idsNewestFirst.filter((id, rank) => {
    const previewRank = previewIds.has(id) ? previews++ : undefined;
    return !KEEP_RULES.some((keeps) => keeps({ id, rank, previewRank, activeId }, retention));
  });
}

/**
 * A stored deploy's problems: details since they have places, plain lines before (a line is
 * then its own detail, without a place).
 */
function problemsOf(stored: string | null): Pick<Deploy, 'problems' | 'problemDetails'> {
  const list = stored ? (JSON.parse(stored) as (string | ProblemDetail)[]) : [];
  const problemDetails = list.map((item) =>
    typeof item === 'string' ? { pointer: '', line: null, column: null, message: item } : item,
  );
  return {
    problems: list.map((item) => (typeof item === 'string' ? item : problemText(item))),
    problemDetails,
  };
}

/** A stored deploy as read here; deploy-records.ts adds its number, author and changes. */
export function toDeploy(
  slug: string,
  activeId: number | null,
  row: {
    id: number;
    status: DeployStatus;
    origin_url: string;
    source_format: SourceFormat;
    problems: string | null;
    created_at: string;
  },
): Deploy {
  return {
    id: row.id,
    projectSlug: slug,
    status: row.status,
    originUrl: row.origin_url,
    sourceFormat: row.source_format,
    ...problemsOf(row.problems),
    active: row.id === activeId,
    createdAt: row.created_at,
  };
}

/** Reads a deployed document in a reading thread: its JSON to store, or its problems, or a refusal. */
export function readDocument(source: string, limits: DocumentLimits): Promise<ReadDocument> {
  return documentReaders.run({ source, limits });
}

/** A deploy as the API shows it (its Deploy schema): what it was, with its place among the others. */
export type DeployView = Deploy & DeployFacts;

export function toDeployView(slug: string, activeId: number | null, row: DeployRow): DeployView {
  return { ...toDeploy(slug, activeId, { ...row, id: Number(row.id) }), ...deployFacts(row) };
}

export interface DeployInput {
  document: string;
  originUrl?: string;
  /** Publish even when the changes against the live deploy break callers. */
  allowBreaking?: boolean;
  /** Store it as a preview: succeeded or failed, it never changes the live site. */
  preview?: boolean;
}

/** What a dry run answers: whether the document would deploy, and what it would change. */
export type DryRun = Pick<Deploy, 'problems' | 'problemDetails'> & {
  valid: boolean;
  changes: Change[];
  breaking: boolean;
};

/** Reads the document off the event loop; a document past a limit is refused, nothing stored. */
async function read(ctx: PlatformContext, source: string) {
  const parsed = await readDocument(source, documentLimitsOf(ctx.config));
  if (parsed.refusal) throw platformErrors.error(parsed.refusal.code, parsed.refusal.message);
  return parsed;
}

/**
 * Deploys a project: the document is validated and stored as an immutable deploy, numbered in
 * the project, with its author and its changes against the live deploy. A valid one becomes the
 * live deploy (and its origin the project's) unless it is a preview; when its changes break
 * callers it is refused with 409 breaking_changes and nothing is stored, unless `allowBreaking`.
 * An invalid one is kept as a failed deploy carrying its problems; the live deploy does not change.
 */
export async function deployProject(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  input: DeployInput,
): Promise<DeployView> {
  const project = await projectFor(ctx, actor, slug);
  const originUrl = input.originUrl === undefined ? project.originUrl : checkOriginUrl(input.originUrl);
  const parsed = await read(ctx, input.document);
  const status: DeployStatus = parsed.json !== null ? 'succeeded' : 'failed';
  const preview = input.preview === true;
  const { deploy, webhook } = await withSettledLiveDeploy(async () => {
    let liveId: number | null = null;
    let changes: DeployChanges | null = null;
    if (parsed.json !== null) ({ liveId, changes } = await changesAgainstLive(ctx, project, parsed.json));
    if (!preview && input.allowBreaking !== true) {
      await refuseBreaking(
        ctx,
        project.id,
        changes,
        'This deploy',
        'deploy it as a preview to look at it first, or send it again with allowBreaking: true to publish it anyway',
      );
    }
    return transact(ctx.db, async (trx) => {
      const liveNow = await lockProject(trx, ctx.dialect, project.id);
      if (status === 'succeeded' && liveNow !== liveId) throw new LiveDeployMoved();
      const last = await trx
        .selectFrom('deploys')
        .select((eb) => eb.fn.max('number').as('number'))
        .where('project_id', '=', project.id)
        .executeTakeFirst();
      const number = Number(last?.number ?? 0) + 1;
      const row = await trx
        .insertInto('deploys')
        .values({
          project_id: project.id,
          number,
          status,
          origin_url: originUrl,
          document: parsed.json,
          source_format: parsed.format,
          problems: parsed.problems.length > 0 ? JSON.stringify(parsed.problems) : null,
          created_by: actor.userId,
          created_at: ctx.clock.now().toISOString(),
          preview: preview ? 1 : 0,
          changes: changes?.json ?? null,
          breaking: changes?.breaking ? 1 : 0,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const id = Number(row.id);
      let activeId = liveNow;
      let enqueued = false;
      if (status === 'succeeded' && !preview) {
        activeId = id;
        ({ webhook: enqueued } = await makeLive(ctx, trx, {
          project,
          deploy: { id, number, originUrl, createdBy: actor.email },
          changes: changes ?? NO_CHANGES,
          actor,
        }));
      }
      // Pruned with the deploy that makes them old, so a project never holds more than it keeps.
      const ids = await trx
        .selectFrom('deploys')
        .select(['id', 'preview'])
        .where('project_id', '=', project.id)
        .orderBy('id', 'desc')
        .execute();
      const pruned = deploysToPrune(
        ids.map((r) => Number(r.id)),
        activeId,
        ctx.config.deployRetention,
        new Set(ids.filter((r) => Number(r.preview) === 1).map((r) => Number(r.id))),
      );
      if (pruned.length > 0) await trx.deleteFrom('deploys').where('id', 'in', pruned).execute();
      const stored = await selectDeploys(trx, project.id)
        .where('deploys.id', '=', id)
        .executeTakeFirstOrThrow();
      return { deploy: toDeployView(slug, activeId, stored), webhook: enqueued };
    });
  });
  if (deploy.status === 'succeeded') ctx.changes.publish({ kind: 'deploys', projectId: project.id });
  if (webhook) ctx.webhooks?.wake();
  // Each breaking change with its operation's calls of the last 7 days (docs/traffic.md).
  return { ...deploy, changes: await addTraffic(ctx.db, project.id, deploy.changes, ctx.clock.now()) };
}

/**
 * What deploying the document would do, without deploying or storing anything: its problems
 * when it is invalid, its changes against the live deploy when it is valid.
 */
export async function dryRunDeploy(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  input: { document: string; originUrl?: string },
): Promise<DryRun> {
  const project = await projectFor(ctx, actor, slug);
  if (input.originUrl !== undefined) checkOriginUrl(input.originUrl);
  const parsed = await read(ctx, input.document);
  if (parsed.json === null) {
    // The problems as a failed deploy would show them.
    const failed = toDeploy(slug, null, {
      id: 0,
      status: 'failed',
      origin_url: project.originUrl,
      source_format: parsed.format,
      problems: JSON.stringify(parsed.problems),
      created_at: ctx.clock.now().toISOString(),
    });
    return {
      valid: false,
      problems: failed.problems,
      problemDetails: failed.problemDetails,
      changes: [],
      breaking: false,
    };
  }
  const { changes } = await changesAgainstLive(ctx, project, parsed.json);
  return {
    valid: true,
    problems: [],
    problemDetails: [],
    changes: await addTraffic(ctx.db, project.id, changes?.changes ?? [], ctx.clock.now()),
    breaking: changes?.breaking ?? false,
  };
}

export async function listDeploys(ctx: PlatformContext, actor: Actor, slug: string): Promise<DeployView[]> {
  const project = await projectFor(ctx, actor, slug);
  const rows = await selectDeploys(ctx.db, project.id).orderBy('deploys.id', 'desc').execute();
  return rows.map((r) => toDeployView(slug, project.activeDeployId, r));
}

export async function readDeploy(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  id: number,
): Promise<DeployView> {
  const project = await projectFor(ctx, actor, slug);
  const row = await selectDeploys(ctx.db, project.id).where('deploys.id', '=', id).executeTakeFirst();
  if (!row) throw deployNotFound(slug, id);
  return toDeployView(slug, project.activeDeployId, row);
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
