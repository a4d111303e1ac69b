// @ts-check
import { ApiError, api } from './api.js';
import { h, replaceChildren } from './dom.js';
import { originGrantsSection } from './team-origin-grants.js';
import { planSection } from './team-plan.js';
import { webhookForMembers, webhookSection } from './team-webhook.js';
import { notFound, pageTitle, teamHeader } from './views.js';
import { cardSection, confirmAction, fieldForm, muted, titledSection } from './widgets.js';

/**
 * A team's settings: its name and deletion (team owners and platform admins), its plan
 * (team-plan.js: everyone in the team sees it; platform admins change it) and its webhook
 * (team-webhook.js, webhook-deliveries.js: team owners and platform admins). The API decides who
 * may do what (src/platform/api/routes/teams.ts, webhooks.ts); the page only leaves out what
 * would be refused.
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {import('./types.js').Team} Team */
/** @typedef {import('./types.js').Member} TeamMember */

/**
 * Who can act, in words: "owner@x.test" or "Ana (ana@x.test) or owner@x.test".
 * @param {TeamMember[]} owners
 */
function ownerNames(owners) {
  const names = owners.map((o) => (o.name ? `${o.name} (${o.email})` : o.email));
  return names.length <= 1
    ? (names[0] ?? 'a team owner')
    : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/**
 * @param {ViewContext} context
 * @param {string} teamIdText
 */
export async function renderTeamSettings(
  { main, me: signedIn, reloadTeams, navigate, setFlash },
  teamIdText,
) {
  // Signed-in pages only (the shell sends everyone else to sign in first).
  const me = /** @type {import('./types.js').Me} */ (signedIn);
  const teamId = Number(teamIdText);
  const base = `/api/v1/teams/${teamId}`;
  /** @type {Team} */
  let team;
  /** @type {TeamMember[]} */
  let members;
  try {
    if (!Number.isSafeInteger(teamId) || teamId < 1)
      throw new ApiError(404, { code: 'team_not_found', message: `“${teamIdText}” is not a team id.` });
    [team, members] = await Promise.all([api('GET', base), api('GET', `${base}/members`)]);
  } catch (error) {
    notFound(main, 'team', error);
    return;
  }
  pageTitle('Settings', team.name);
  const owners = ownerNames(members.filter((m) => m.role === 'owner'));
  const isOwner = team.role === 'owner' || me.isAdmin;
  const webhook = isOwner ? webhookSection(teamId) : null;

  replaceChildren(
    main,
    teamHeader(
      team,
      'settings',
      team.role === 'owner'
        ? 'You are an owner'
        : team.role === 'member'
          ? 'You are a member'
          : 'You are a platform admin',
    ),
    isOwner ? nameSection() : null,
    planSection({ team, me, ownerNames: owners, reloadTeams }),
    originGrantsSection({ team, me }),
    webhook ? webhook.element : webhookForMembers(owners),
    isOwner ? deleteSection() : null,
  );

  return () => webhook?.stop();

  /** Owners rename the team; everyone sees the new name at once (the header, the heading). */
  function nameSection() {
    const input = h('input', { name: 'name', type: 'text', maxlength: 100, autocomplete: 'off' });
    input.value = team.name;
    const { form, field } = fieldForm({
      id: 'team-name',
      label: 'Team name',
      control: input,
      hint: 'How the team is shown to its people and in invitations.',
      submitLabel: 'Rename',
      busy: 'Renaming…',
      work: rename,
    });
    return cardSection('name', 'Name', form);

    /** @param {HTMLElement} done */
    async function rename(done) {
      if (input.value.trim() === '') {
        field.showError({ message: 'Enter the team’s new name.' });
        input.focus();
        return;
      }
      /** @type {Team} */
      const renamed = await api('PATCH', base, { name: input.value.trim() });
      const before = team.name;
      team.name = renamed.name;
      input.value = renamed.name;
      const title = main.querySelector('h1');
      if (title) title.textContent = renamed.name;
      pageTitle('Settings', renamed.name);
      replaceChildren(done, `Renamed from “${before}” to “${renamed.name}”.`);
      await reloadTeams().catch(() => {}); // the header catches up on the next load
    }
  }

  /**
   * Owners delete the team once it has no projects; with projects, the API's team_has_projects
   * names them in the dialog.
   */
  function deleteSection() {
    const button = h('button', { type: 'button', class: 'button danger' }, 'Delete team…');
    button.addEventListener('click', async () => {
      const deleted = await confirmAction({
        title: `Delete the team “${team.name}”?`,
        body: 'Its members lose it at once, its invitation links stop working and its webhook stops. This cannot be undone. A team with projects cannot be deleted: delete or move them first.',
        confirm: 'Delete team',
        busy: 'Deleting…',
        failure: `“${team.name}” was not deleted`,
        trigger: button,
        action: () => api('DELETE', base),
      });
      if (!deleted) return;
      await reloadTeams().catch(() => {});
      setFlash({ message: `The team “${team.name}” is deleted.` });
      navigate('/teams');
    });
    return titledSection(
      'card leave',
      'delete',
      'Delete the team',
      muted('Only a team without projects can be deleted. Its people keep their accounts.'),
      h('div', {}, button),
    );
  }
}
