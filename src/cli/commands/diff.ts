import { type Change, type ChangeLevel, diffDocuments, hasBreaking } from '../../lib/openapi-diff/index.ts';
import { readOpenApiText } from '../../lib/openapi-diff/read-document.ts';
import type { Project } from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { type Call, defineCommand } from '../command.ts';
import { CliError, EXIT } from '../errors.ts';
import { readTextFile } from '../files.ts';
import { changeLines, changeSummary, painter } from '../print-changes.ts';
import { projectPath } from './projects.ts';

/** What --json prints: every change with all five fields (operation null when there is none). */
export interface DiffResult {
  breaking: boolean;
  changes: { id: string; level: ChangeLevel; operation: string | null; location: string; message: string }[];
}

/**
 * A file's document, or exit 2 with its problems: in CI, exit 1 must only ever mean "something
 * breaks", so a file that cannot be read or is not an OpenAPI document is a usage error.
 */
async function readDocumentFile(call: Call, file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readTextFile(call.io, file);
  } catch (error) {
    throw new CliError((error as Error).message, EXIT.usage, 'file_unreadable');
  }
  const read = readOpenApiText(text);
  if (read.document !== undefined) return read.document;
  throw new CliError(
    [`${file} is not a valid OpenAPI document:`, ...read.problems.map((problem) => `- ${problem}`)].join(
      '\n',
    ),
    EXIT.usage,
    'invalid_document',
  );
}

/** The live deploy's document of a project, through the management API. */
async function liveDocument(call: Call, slug: string): Promise<Record<string, unknown>> {
  const api = call.api();
  const project = await api.get<Project>(projectPath(slug));
  if (project.activeDeployId === undefined || project.activeDeployId === null)
    throw new CliError(
      `${slug} has no live deploy to compare with: deploy a document first (kennel deploy ${slug} FILE).`,
      EXIT.usage,
      'no_live_deploy',
    );
  return api.get<Record<string, unknown>>(
    path`/api/v1/projects/${slug}/deploys/${project.activeDeployId}/document`,
  );
}

function printHuman(call: Call, changes: readonly Change[], baseName: string, revisionName: string): void {
  if (changes.length === 0) {
    call.out.line(`No changes between ${baseName} and ${revisionName}.`);
    return;
  }
  call.out.line(changeSummary(changes, baseName, revisionName));
  call.out.line();
  for (const line of changeLines(changes, painter(call.io.stdout, call.io.env))) call.out.line(line);
}

export const diffCommand = defineCommand({
  name: 'diff',
  summary: 'List the changes between two OpenAPI documents, and whether any breaks callers',
  args: ['BASE'],
  optionalArgs: ['REVISION'],
  options: {
    project: {
      type: 'string',
      value: 'SLUG',
      description: "Compare the one file given with this project's live deploy (signed in)",
    },
  },
  description: [
    'kennel diff BASE REVISION compares two OpenAPI 3.0/3.1 documents (JSON or YAML files, - for stdin), offline. kennel diff --project SLUG FILE compares FILE with the document the project serves now.',
    'Every change has a rule id, a level (breaking, warning, info), the operation and the place in the document; docs/changes.md lists the rules. Removing a deprecated operation is breaking until the sunset date its document named (x-sunset).',
    'Exit codes, for CI: 0 nothing breaking, 1 something breaks callers, 2 a usage error or a file that cannot be read or is not a valid OpenAPI document (with its problems); with --project also 3 not signed in and 4 server unreachable.',
  ].join('\n\n'),
  examples: [
    'kennel diff openapi.main.yaml openapi.yaml',
    'kennel diff old.json new.json --json',
    'kennel diff --project petstore openapi.yaml',
  ],
  async run(call) {
    const slug = call.string('project');
    const first = call.args.BASE ?? '';
    const second = call.args.REVISION;
    let base: Record<string, unknown>;
    let revision: Record<string, unknown>;
    let names: [string, string];
    if (slug !== undefined) {
      if (second !== undefined)
        throw call.usage(
          `with --project give one FILE to compare with the live deploy (got "${first}" and "${second}").`,
        );
      revision = await readDocumentFile(call, first);
      base = await call.progress.during(`Fetching the live document of ${slug}…`, liveDocument(call, slug));
      names = [`${slug} (live)`, first];
    } else {
      if (second === undefined)
        throw call.usage('missing REVISION: give two files, or --project SLUG and one file.');
      base = await readDocumentFile(call, first);
      revision = await readDocumentFile(call, second);
      names = [first, second];
    }
    const changes = diffDocuments(base, revision);
    const breaking = hasBreaking(changes);
    const result: DiffResult = {
      breaking,
      changes: changes.map(({ id, level, operation, location, message }) => ({
        id,
        level,
        operation: operation ?? null,
        location,
        message,
      })),
    };
    call.out.result(result, () => printHuman(call, changes, ...names));
    return breaking ? EXIT.failed : EXIT.ok;
  },
});
