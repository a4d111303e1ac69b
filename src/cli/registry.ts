import type { CommandSpec, GroupSpec } from './command.ts';
import { deployCommand } from './commands/deploy.ts';
import { deploysGroup } from './commands/deploys.ts';
import { diffCommand } from './commands/diff.ts';
import { domainsGroup } from './commands/domains.ts';
import { keysGroup } from './commands/keys.ts';
import { loginCommand } from './commands/login.ts';
import { logoutCommand } from './commands/logout.ts';
import { logsCommand } from './commands/logs.ts';
import { membersGroup } from './commands/members.ts';
import { originsGroup } from './commands/origins.ts';
import { passwordGroup } from './commands/password.ts';
import { projectsGroup } from './commands/projects.ts';
import { teamsGroup } from './commands/teams.ts';
import { trafficCommand } from './commands/traffic.ts';
import { webhooksGroup } from './commands/webhooks.ts';
import { whoamiCommand } from './commands/whoami.ts';

/** Every command of `kennel`, in the order `kennel --help` lists them. */
export const COMMANDS: readonly (CommandSpec | GroupSpec)[] = [
  loginCommand,
  logoutCommand,
  whoamiCommand,
  teamsGroup,
  membersGroup,
  passwordGroup,
  projectsGroup,
  deployCommand,
  diffCommand,
  deploysGroup,
  domainsGroup,
  trafficCommand,
  logsCommand,
  webhooksGroup,
  originsGroup,
  keysGroup,
];

export function isGroup(entry: CommandSpec | GroupSpec): entry is GroupSpec {
  return 'commands' in entry;
}

/** Every runnable command, groups expanded: `login`, …, `domains export`. */
export function allCommands(): CommandSpec[] {
  return COMMANDS.flatMap((entry) => (isGroup(entry) ? [...entry.commands] : [entry]));
}
