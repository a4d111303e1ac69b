import type { Change, Deploy, DeployCheck } from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { projectCommand } from '../command.ts';
import { ApiFailure, EXIT } from '../errors.ts';
import { readTextFile } from '../files.ts';
import { changeLines } from '../print-changes.ts';

export const deployCommand = projectCommand({
  name: 'deploy',
  summary: "Deploy a project's OpenAPI document (JSON or YAML)",
  args: ['FILE'],
  options: {
    origin: { type: 'string', value: 'URL', description: 'Also move the project to a new origin' },
    'allow-breaking': {
      type: 'boolean',
      description: 'Publish even when the changes against the live deploy break callers',
    },
    'dry-run': {
      type: 'boolean',
      description: 'Only check: print the problems or the changes; deploy and store nothing',
    },
    preview: {
      type: 'boolean',
      description: 'Deploy as a preview, which does not change the live site (promote it later)',
    },
  },
  description:
    'Uploads the OpenAPI 3.0.x or 3.1.x document in FILE (- for stdin) as it is and prints its changes against the live deploy, grouped by level. A valid document becomes the live deploy; when a change would break callers the deploy is refused (nothing is stored, exit 1) unless --allow-breaking. An invalid one is kept as a failed deploy, its problems are printed, the live deploy does not change and the exit code is 1. --dry-run deploys nothing: exit 0 when the document would deploy, 1 when it is invalid or breaking. --preview stores a deploy that does not change the live site; kennel deploys promote makes it live.',
  examples: [
    'kennel deploy petstore openapi.yaml',
    'kennel deploy petstore openapi.yaml --dry-run',
    'kennel deploy petstore openapi.yaml --allow-breaking',
    'kennel deploy petstore openapi.yaml --preview',
    'kennel deploy petstore openapi.json --origin https://api.internal:4010',
  ],
  async run(call, slug) {
    const file = call.args.FILE ?? '';
    const dryRun = call.flag('dry-run');
    if (dryRun && (call.flag('allow-breaking') || call.flag('preview')))
      throw call.usage('--dry-run deploys nothing: leave out --allow-breaking and --preview.');
    const document = await readTextFile(call.io, file);
    const origin = call.string('origin');
    const body = {
      document,
      ...(origin === undefined ? {} : { originUrl: origin }),
      ...(dryRun ? { dryRun: true } : {}),
      ...(call.flag('allow-breaking') ? { allowBreaking: true } : {}),
      ...(call.flag('preview') ? { preview: true } : {}),
    };
    const route = path`/api/v1/projects/${slug}/deploys`;
    const sending = `${dryRun ? 'Checking' : 'Deploying'} ${file} (${Math.ceil(Buffer.byteLength(document) / 1024)} KiB) to ${slug}…`;
    if (dryRun) {
      const check = await call.progress.during(sending, call.api().post<DeployCheck>(route, body));
      call.out.result(check, () => {
        if (!check.valid) {
          call.out.line(`${file} would fail to deploy to ${slug}. Problems:`);
          for (const problem of check.problems) call.out.line(`  - ${problem}`);
          return;
        }
        call.out.line(
          check.breaking
            ? `${file} would be refused: it breaks callers of ${slug}'s live API (deploy it with --allow-breaking).`
            : `${file} would deploy to ${slug}.`,
        );
        for (const line of changeLines(check.changes)) call.out.line(line);
      });
      return check.valid && !check.breaking ? EXIT.ok : EXIT.failed;
    }
    let deploy: Deploy;
    try {
      deploy = await call.progress.during(sending, call.api().post<Deploy>(route, body));
    } catch (error) {
      printRefusedChanges(call, error);
      throw error;
    }
    call.out.result(deploy, () => {
      if (deploy.status === 'succeeded') {
        call.out.line(
          deploy.preview
            ? `Preview #${deploy.number} (deploy ${deploy.id}) of ${slug} succeeded (${deploy.sourceFormat}); the live site is unchanged. Make it live with kennel deploys promote ${slug} ${deploy.id}.`
            : `Deploy #${deploy.number} (deploy ${deploy.id}) of ${slug} succeeded (${deploy.sourceFormat}); it is now live, with origin ${deploy.originUrl}.`,
        );
        for (const line of changeLines(deploy.changes)) call.out.line(line);
      } else {
        call.out.line(
          `Deploy #${deploy.number} (deploy ${deploy.id}) of ${slug} failed; the live deploy is unchanged. Problems:`,
        );
        for (const problem of deploy.problems) call.out.line(`  - ${problem}`);
      }
    });
    return deploy.status === 'succeeded' ? EXIT.ok : EXIT.failed;
  },
});

/**
 * A deploy or promotion refused for breaking changes: the changes, on stderr before the error
 * line (which names the option that forces it); --json prints the error body, changes included.
 */
export function printRefusedChanges(
  call: { out: { json: boolean; note(text: string): void } },
  error: unknown,
) {
  if (!(error instanceof ApiFailure) || error.body.code !== 'breaking_changes' || call.out.json) return;
  const changes = (error.body as { changes?: Change[] }).changes ?? [];
  for (const line of changeLines(changes)) call.out.note(line);
}
