import type { DeployComparison, Promotion } from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { type GroupSpec, idArg, positiveInteger, projectCommand } from '../command.ts';
import { changeLines } from '../print-changes.ts';
import { printRefusedChanges } from './deploy.ts';

export const deploysGroup: GroupSpec = {
  name: 'deploys',
  summary: 'Make an earlier deploy live again; compare deploys',
  description:
    'Every deploy of a project is kept (the live one and the latest DEPLOY_RETENTION): list them with kennel projects deploys SLUG.',
  commands: [
    projectCommand({
      name: 'deploys promote',
      summary: 'Make an earlier deploy (or a preview) of a project live again',
      args: ['DEPLOY_ID'],
      options: {
        'allow-breaking': {
          type: 'boolean',
          description: 'Publish even when its changes against the live deploy break callers',
        },
      },
      description:
        'Makes a succeeded deploy live again in one step, with its origin, and prints its changes against the deploy live before. The deploy gate applies: when a change would break callers nothing changes and the exit code is 1, unless --allow-breaking.',
      examples: ['kennel deploys promote petstore 42', 'kennel deploys promote petstore 42 --allow-breaking'],
      async run(call, slug) {
        const id = idArg(call, 'DEPLOY_ID');
        let promotion: Promotion;
        try {
          promotion = await call.progress.during(
            `Promoting deploy ${id} of ${slug}…`,
            call
              .api()
              .post<Promotion>(
                path`/api/v1/projects/${slug}/deploys/${id}/promote`,
                call.flag('allow-breaking') ? { allowBreaking: true } : {},
              ),
          );
        } catch (error) {
          printRefusedChanges(call, error);
          throw error;
        }
        call.out.result(promotion, ({ deploy, publication }) => {
          call.out.line(
            `Deploy #${deploy.number} (deploy ${deploy.id}) of ${slug} is live again, with origin ${deploy.originUrl}.`,
          );
          for (const line of changeLines(publication.changes)) call.out.line(line);
        });
      },
    }),
    projectCommand({
      name: 'deploys compare',
      summary: 'List the changes from one deploy of a project to another',
      args: ['DEPLOY_ID'],
      options: {
        against: {
          type: 'string',
          value: 'ID',
          description: 'The deploy to compare with (the old side; default: the live one)',
        },
      },
      examples: ['kennel deploys compare petstore 42', 'kennel deploys compare petstore 42 --against 40'],
      async run(call, slug) {
        const id = idArg(call, 'DEPLOY_ID');
        const against = call.string('against');
        const query = against === undefined ? '' : `?against=${positiveInteger(call, '--against', against)}`;
        const comparison = await call
          .api()
          .get<DeployComparison>(`${path`/api/v1/projects/${slug}/deploys/${id}/changes`}${query}`);
        call.out.result(comparison, () => {
          call.out.line(`From deploy ${comparison.againstId} to deploy ${comparison.deployId} of ${slug}:`);
          for (const line of changeLines(comparison.changes)) call.out.line(line);
        });
      },
    }),
  ],
};
