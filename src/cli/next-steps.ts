import type { ApiErrorBody } from './errors.ts';

/**
 * The CLI's next step for an API error, by its code: the one table of them. The platform's
 * messages are shared by the dashboard, the CLI and raw API users, so they say what to do in
 * words that hold in all three ("check the slug against the list of your projects"); each
 * client names its own way to do it (docs/decisions/cli.md, "Messages name the place where the user
 * is"). `args` are the command's arguments (SLUG, HOSTNAME, TEAM_ID), when it has them.
 */
type NextStep = (args: Readonly<Record<string, string>>) => string | undefined;

const slug = (a: Readonly<Record<string, string>>) => a.SLUG ?? 'SLUG';
const team = (a: Readonly<Record<string, string>>) => a.TEAM_ID ?? 'TEAM_ID';

export const NEXT_STEPS: Readonly<Record<string, NextStep>> = {
  // A token the server does not know: `kennel login` replaces the saved one.
  unauthenticated: () => 'kennel login (or set KENNEL_TOKEN to a valid token)',
  team_not_found: () => 'kennel teams list',
  project_not_found: () => 'kennel projects list',
  deploy_not_found: (a) => `kennel projects deploys ${slug(a)}`,
  deploy_required: (a) => `kennel deploy ${slug(a)} FILE`,
  // A deploy names its FILE, a promotion its DEPLOY_ID: the same option forces either.
  breaking_changes: (a) =>
    a.FILE !== undefined
      ? `kennel deploy ${slug(a)} ${a.FILE} --allow-breaking (or --preview to look at it first)`
      : `kennel deploys promote ${slug(a)} ${a.DEPLOY_ID ?? 'DEPLOY_ID'} --allow-breaking`,
  deploy_failed: (a) => `kennel projects deploys ${slug(a)}`,
  // Only a platform admin can change a plan; the message says whether that is the caller.
  plan_required: () => 'kennel teams set-plan TEAM_ID pro (platform admins)',
  domain_not_found: (a) => `kennel domains list ${slug(a)}`,
  domain_already_added: (a) => `kennel domains inspect ${slug(a)} ${a.HOSTNAME ?? 'HOSTNAME'}`,
  member_not_found: (a) => `kennel members list ${team(a)}`,
  invitation_not_found: (a) => `kennel members invitations ${team(a)}`,
  webhook_not_found: (a) => `kennel webhooks set ${team(a)} URL`,
  delivery_not_found: (a) => `kennel webhooks deliveries ${team(a)}`,
};

/** The command to run next for this error, if the table has one. */
export function nextStepFor(body: ApiErrorBody, args: Readonly<Record<string, string>>): string | undefined {
  return Object.hasOwn(NEXT_STEPS, body.code) ? NEXT_STEPS[body.code]?.(args) : undefined;
}
