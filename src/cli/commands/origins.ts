import type { OriginGrant } from '../../platform/api-types.ts';
import { defineCommand, type GroupSpec, idArg, teamCommand } from '../command.ts';

const GRANTS = '/api/v1/origin-grants';

export const originsGroup: GroupSpec = {
  name: 'origins',
  summary: 'Which teams may reach which private origins (platform admins)',
  description:
    "A project's origin must be a public address; a platform admin lets one team's projects use a private origin (scheme://host:port) with a grant. KENNEL_ORIGIN_ALLOWLIST serves the teams granted KENNEL_ORIGIN_ALLOWLIST (the first start's team). See docs/security.md.",
  commands: [
    defineCommand({
      name: 'origins list',
      summary: 'List the origin grants',
      examples: ['kennel origins list'],
      async run(call) {
        call.out.list(await call.api().get<OriginGrant[]>(GRANTS), {
          headers: ['ID', 'Team', 'Origin', 'Granted by', 'Since'],
          row: (g) => [
            g.id,
            `${g.teamId} ${g.teamName}`,
            g.origin,
            g.grantedBy ?? '(first start)',
            g.createdAt,
          ],
          empty: 'No team may reach a private origin.',
        });
      },
    }),
    teamCommand({
      name: 'origins grant',
      summary: "Let a team's projects use a private origin",
      args: ['ORIGIN'],
      description:
        'ORIGIN is scheme://host:port exactly (no path): the same host on another port or scheme stays refused, and other teams may not use the host. KENNEL_ORIGIN_ALLOWLIST grants every origin of that setting.',
      examples: ['kennel origins grant 3 http://10.0.0.5:8080'],
      async run(call, teamId) {
        const grant = await call.api().post<OriginGrant>(GRANTS, { teamId, origin: call.args.ORIGIN });
        call.out.resultLine(
          grant,
          `Team ${grant.teamId} "${grant.teamName}" may use ${grant.origin} (grant ${grant.id}; revoke with kennel origins revoke ${grant.id}).`,
        );
      },
    }),
    defineCommand({
      name: 'origins revoke',
      summary: 'Take a grant back: its projects stop being forwarded at once',
      args: ['GRANT_ID'],
      examples: ['kennel origins list', 'kennel origins revoke 4'],
      async run(call) {
        const id = idArg(call, 'GRANT_ID');
        await call.api().delete(`${GRANTS}/${id}`);
        call.out.resultLine({ revoked: true, id }, `Grant ${id} is revoked.`);
      },
    }),
  ],
};
