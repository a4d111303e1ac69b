import type { Deploy, Project, ProjectDeletion } from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { defineCommand, type GroupSpec, positiveInteger, projectCommand } from '../command.ts';
import { EXIT } from '../errors.ts';
import type { Output } from '../output.ts';
import { confirmed, YES_OPTION } from '../prompt.ts';

export const projectPath = (slug: string) => path`/api/v1/projects/${slug}`;

/** "2 custom domains, 1 certificate and 3 deploys": what goes with a deleted project. */
function holdings(d: ProjectDeletion): string {
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  return `${n(d.domains, 'custom domain', 'custom domains')}, ${n(d.certificates, 'certificate', 'certificates')} and ${n(d.deploys, 'deploy', 'deploys')}`;
}

function printProject(out: Output, p: Project): void {
  out.fields([
    ['Project', `${p.slug} (${p.name})`],
    ['Team', p.teamId],
    ['Plan', p.plan],
    ['Default address', p.defaultHost],
    ['Origin', p.originUrl],
    ['Active deploy', p.activeDeployId ?? 'none yet (kennel deploy)'],
    ['Primary domain', p.primaryDomain],
  ]);
}

/** `3 (1 breaking)`: a deploy's changes against the deploy live when it was made. */
function changeCount(d: Deploy): string {
  const breaking = d.changes.filter((c) => c.level === 'breaking').length;
  return `${d.changes.length}${breaking > 0 ? ` (${breaking} breaking)` : ''}`;
}

export function printDeploys(out: Output, deploys: Deploy[]): void {
  out.table(
    ['#', 'ID', 'Status', 'Live', 'Changes', 'By', 'Format', 'Origin', 'Created'],
    deploys.map((d) => [
      d.number,
      d.id,
      d.preview ? `${d.status} (preview)` : d.status,
      d.active ? 'yes' : '',
      changeCount(d),
      d.createdBy,
      d.sourceFormat,
      d.originUrl,
      d.createdAt,
    ]),
  );
}

export const projectsGroup: GroupSpec = {
  name: 'projects',
  summary: 'Projects and their deploy history',
  description:
    'A project publishes one API at <slug>.<platform domain> once deployed, and at its custom domains once they are verified.',
  commands: [
    defineCommand({
      name: 'projects list',
      summary: "List your teams' projects",
      examples: ['kennel projects list', 'kennel projects list --json'],
      async run(call) {
        call.out.list(await call.api().get<Project[]>('/api/v1/projects'), {
          headers: ['Slug', 'Name', 'Team', 'Plan', 'Default address', 'Deploy', 'Primary domain'],
          row: (p) => [p.slug, p.name, p.teamId, p.plan, p.defaultHost, p.activeDeployId, p.primaryDomain],
          empty: 'No projects yet. Create one with kennel projects create.',
        });
      },
    }),
    defineCommand({
      name: 'projects create',
      summary: 'Create a project in one of your teams',
      options: {
        team: { type: 'string', value: 'ID', description: 'The team that owns it', required: true },
        slug: {
          type: 'string',
          value: 'SLUG',
          description: 'DNS label of its default address <slug>.<platform domain>',
          required: true,
        },
        name: { type: 'string', value: 'NAME', description: 'Display name', required: true },
        origin: {
          type: 'string',
          value: 'URL',
          description: 'Where the API runs (http or https)',
          required: true,
        },
      },
      examples: [
        'kennel projects create --team 3 --slug petstore --name Petstore --origin https://api.internal:4010',
      ],
      async run(call) {
        const teamId = positiveInteger(call, '--team', call.string('team') ?? '');
        const project = await call.api().post<Project>('/api/v1/projects', {
          teamId,
          slug: call.string('slug'),
          name: call.string('name'),
          originUrl: call.string('origin'),
        });
        call.out.result(project, () => {
          call.out.line(`Created project ${project.slug}.`);
          printProject(call.out, project);
          call.out.line(`Next: kennel deploy ${project.slug} openapi.yaml`);
        });
      },
    }),
    projectCommand({
      name: 'projects show',
      summary: 'Show a project: address, origin, plan, active deploy, primary domain',
      examples: ['kennel projects show petstore'],
      async run(call, slug) {
        const project = await call.api().get<Project>(projectPath(slug));
        call.out.result(project, () => printProject(call.out, project));
      },
    }),
    projectCommand({
      name: 'projects rename',
      summary: "Change a project's display name (its slug, the published address, stays)",
      args: ['NAME'],
      examples: ['kennel projects rename petstore "Petstore v2"'],
      async run(call, slug) {
        const project = await call.api().patch<Project>(projectPath(slug), { name: call.args.NAME });
        call.out.resultLine(project, `Project ${project.slug} is now called "${project.name}".`);
      },
    }),
    projectCommand({
      name: 'projects set-origin',
      summary: "Move a project's API to another origin, checked as at creation",
      args: ['URL'],
      description:
        'The edge forwards to the new origin from the next request. A private address needs a platform admin’s grant to the team (origin_not_allowed). Past deploys keep the origin they were made with.',
      examples: ['kennel projects set-origin petstore https://api2.example.com'],
      async run(call, slug) {
        const project = await call.api().patch<Project>(projectPath(slug), { originUrl: call.args.URL });
        call.out.resultLine(project, `Requests to ${project.slug}'s API now go to ${project.originUrl}.`);
      },
    }),
    projectCommand({
      name: 'projects delete',
      summary: 'Delete a project with its domains, certificates and deploys (team owners)',
      options: YES_OPTION,
      description:
        'Says what goes with the project and asks on a terminal; elsewhere --yes is required. Its addresses stop answering at once and the slug becomes free. There is no undo. Answering no exits with 1.',
      examples: ['kennel projects delete petstore', 'kennel projects delete petstore --yes'],
      async run(call, slug) {
        const sure = await confirmed(call, {
          unattended:
            'Deleting a project removes its domains, certificates and deploys for good: confirm with --yes (there is no terminal to ask on).',
          async question() {
            const going = await call.api().get<ProjectDeletion>(path`/api/v1/projects/${slug}/deletion`);
            return `Delete ${slug} with its ${holdings(going)}? Its addresses stop answering at once; there is no undo.`;
          },
          declined: 'Nothing was deleted.',
        });
        if (!sure) return EXIT.failed;
        const removed = await call.api().delete<ProjectDeletion>(projectPath(slug));
        call.out.resultLine(
          removed,
          `Deleted ${removed.slug}, with ${holdings(removed)}. The slug is free again.`,
        );
      },
    }),
    projectCommand({
      name: 'projects deploys',
      summary: 'List the deploys of a project, newest first',
      examples: ['kennel projects deploys petstore'],
      async run(call, slug) {
        const deploys = await call.api().get<Deploy[]>(path`/api/v1/projects/${slug}/deploys`);
        call.out.result(deploys, () => {
          if (deploys.length === 0)
            call.out.line(`No deploys of ${slug} yet. Deploy with kennel deploy ${slug} FILE.`);
          else printDeploys(call.out, deploys);
        });
      },
    }),
  ],
};
