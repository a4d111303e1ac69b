import { path } from '../api-client.ts';
import type { Deploy } from '../api-types.ts';
import { defineCommand } from '../command.ts';
import { EXIT } from '../errors.ts';
import { readTextFile } from '../files.ts';

export const deployCommand = defineCommand({
  name: 'deploy',
  summary: "Deploy a project's OpenAPI document (JSON or YAML)",
  args: ['SLUG', 'FILE'],
  options: {
    origin: { type: 'string', value: 'URL', description: 'Also move the project to a new origin' },
  },
  description:
    "Uploads the OpenAPI 3.0.x or 3.1.x document in FILE (- for stdin) as it is. A valid document becomes the active deploy; an invalid one is kept as a failed deploy, the validator's problems are printed, the active deploy does not change and the exit code is 1.",
  examples: [
    'kennel deploy petstore openapi.yaml',
    'kennel deploy petstore openapi.json --origin https://api.internal:4010',
  ],
  async run(call) {
    const slug = call.args.SLUG ?? '';
    const file = call.args.FILE ?? '';
    const document = await readTextFile(call.io, file);
    const origin = call.string('origin');
    const deploy = await call.progress.during(
      `Deploying ${file} to ${slug}…`,
      call.api().post<Deploy>(path`/api/v1/projects/${slug}/deploys`, {
        document,
        ...(origin === undefined ? {} : { originUrl: origin }),
      }),
    );
    call.out.result(deploy, () => {
      if (deploy.status === 'succeeded') {
        call.out.line(
          `Deploy ${deploy.id} of ${slug} succeeded (${deploy.sourceFormat}); it is now active, with origin ${deploy.originUrl}.`,
        );
      } else {
        call.out.line(`Deploy ${deploy.id} of ${slug} failed; the active deploy is unchanged. Problems:`);
        for (const problem of deploy.problems) call.out.line(`  - ${problem}`);
      }
    });
    return deploy.status === 'succeeded' ? EXIT.ok : EXIT.failed;
  },
});
