// @ts-check
import { api } from './api.js';
import { announce, h, replaceChildren, time } from './dom.js';
import { invitationSection } from './team-invitations.js';
import { notFound, pageTitle, teamHeader } from './views.js';
import {
  buttonText,
  cell,
  confirmAction,
  confirmButton,
  dataTable,
  loadInto,
  muted,
  oneTimeSecret,
  submitting,
  titledSection,
} from './widgets.js';

/**
 * A team's people: members with their roles and, for owners (and platform admins), role changes,
 * removal, password reset links and invitations (team-invitations.js). Anyone may leave. Every action is the management
 * API's, so its checks (last owner, cross-team) and its messages are the ones shown.
 */

/** @typedef {import('./types.js').Member} Member */
/** @typedef {import('./types.js').Team} Team */

const ROLE_LABELS = { owner: 'Owner', member: 'Member' };

/**
 * @param {import('./types.js').ViewContext} context
 * @param {string} teamIdParam
 */
export async function renderTeamPeople(context, teamIdParam) {
  const { main, me } = context;
  const teamId = Number(teamIdParam);
  /** @type {Team} */
  let team;
  try {
    team = await api('GET', `/api/v1/teams/${teamId}`);
  } catch (error) {
    notFound(main, 'team', error);
    return;
  }
  pageTitle('People', team.name);
  const manages = team.role === 'owner' || me?.isAdmin === true;
  const notice = h('div', { class: 'slot', 'data-testid': 'people-notice' });
  const members = h('div', {});
  const invitations = manages ? invitationSection(team, notice) : null;

  async function loadMembers() {
    /** @type {Member[] | null} */
    const list = await loadInto(
      members,
      `/api/v1/teams/${teamId}/members`,
      'The members could not be loaded',
    );
    if (!list) return;
    replaceChildren(members, memberTable(list));
    showLeave(list);
  }

  /** @param {Member[]} list */
  function memberTable(list) {
    const owners = list.filter((m) => m.role === 'owner').length;
    return dataTable({
      caption: `Members of ${team.name}`,
      columns: ['Name', 'Email', 'Role', 'Joined', ...(manages ? [''] : [])],
      rows: list.map((m) => memberRow(m, m.role === 'owner' && owners === 1)),
    });
  }

  /**
   * @param {Member} member
   * @param {boolean} lastOwner the team's only owner: no role change or removal would work
   */
  function memberRow(member, lastOwner) {
    const isMe = member.email === me?.email;
    const who = member.name ?? member.email;
    return h(
      'tr',
      { 'data-member': member.email },
      cell(
        'Name',
        // One child: on a phone the cell is a two-column grid (label, value).
        h(
          'span',
          {},
          member.name ?? h('span', { class: 'muted' }, 'No name'),
          isMe ? h('span', { class: 'you' }, ' (you)') : null,
        ),
      ),
      cell('Email', h('span', { class: 'break' }, member.email)),
      cell(
        'Role',
        h('span', { class: `role role-${member.role}`, 'data-testid': 'role' }, ROLE_LABELS[member.role]),
      ),
      cell('Joined', time(member.since)),
      manages ? h('td', { class: 'row-actions' }, memberActions(member, who, isMe, lastOwner)) : null,
    );
  }

  /**
   * @param {Member} member
   * @param {string} who
   * @param {boolean} isMe
   * @param {boolean} lastOwner
   */
  function memberActions(member, who, isMe, lastOwner) {
    const otherRole = member.role === 'owner' ? 'member' : 'owner';
    // A team keeps an owner: the last one is neither made member nor removed (the API would refuse).
    const role = lastOwner
      ? null
      : confirmButton(
          { label: otherRole === 'owner' ? 'Make owner' : 'Make member', context: `(${who})` },
          {
            title: `Make ${who} ${ROLE_LABELS[otherRole].toLowerCase()}?`,
            body:
              otherRole === 'owner'
                ? `${member.email} will be able to invite and remove people, change roles and create password reset links.`
                : `${member.email} keeps access to the team's projects but can no longer manage its people.`,
            confirm: 'Change role',
            busy: 'Changing…',
            danger: false,
            action: () =>
              api('PUT', `/api/v1/teams/${teamId}/members/${member.userId}/role`, { role: otherRole }),
          },
          async () => {
            announce(`${who} is now ${ROLE_LABELS[otherRole].toLowerCase()}`);
            // Demoting yourself ends your owner actions: draw the page again as a member sees it.
            if (isMe) await renderTeamPeople(context, teamIdParam);
            else await loadMembers();
          },
        );
    const reset = isMe
      ? null
      : h('button', { type: 'button', class: 'button button-small' }, buttonText('Reset link', `for ${who}`));
    reset?.addEventListener('click', () =>
      submitting(
        reset,
        notice,
        'Creating…',
        async () => {
          /** @type {import('./types.js').PasswordResetLink} */
          const link = await api('POST', `/api/v1/teams/${teamId}/members/${member.userId}/password-reset`);
          replaceChildren(
            notice,
            oneTimeSecret({
              title: `Password reset link for ${link.email}`,
              label: 'reset link',
              value: link.url,
              note: 'Send it to them yourself: it is shown only now. Opening it lets them set a new password, which signs out all their sessions.',
              expiresAt: link.expiresAt,
              testid: 'reset-link',
            }),
          );
        },
        () => 'No reset link was created',
      ),
    );
    const remove =
      isMe || lastOwner
        ? null
        : confirmButton(
            { label: 'Remove', context: who, danger: true },
            {
              title: `Remove ${who} from ${team.name}?`,
              body: `${member.email} loses access to the team's projects at once. Their account and API tokens stay; invite them again to bring them back.`,
              confirm: 'Remove member',
              busy: 'Removing…',
              action: () => api('DELETE', `/api/v1/teams/${teamId}/members/${member.userId}`),
            },
            async () => {
              announce(`${who} removed from ${team.name}`);
              await loadMembers();
            },
          );
    const note = lastOwner
      ? h(
          'p',
          { class: 'hint', 'data-testid': 'last-owner' },
          `The only owner of ${team.name}: make another member owner before changing ${isMe ? 'your' : 'their'} role.`,
        )
      : null;
    return h('div', { class: 'actions' }, role, reset, remove, note);
  }

  const leaveSlot = h('div', { class: 'slot' });
  /**
   * Leave, unless you are the last owner: then why not, and what to do instead.
   * @param {Member[]} list
   */
  function showLeave(list) {
    const mine = list.find((m) => m.email === me?.email);
    const owners = list.filter((m) => m.role === 'owner').length;
    if (mine?.role === 'owner' && owners === 1) {
      replaceChildren(
        leaveSlot,
        h(
          'p',
          { 'data-testid': 'leave-last-owner' },
          `You are the only owner of ${team.name}, so you cannot leave it. Make another member owner first, or `,
          h('a', { href: `/teams/${teamId}/settings`, 'data-link': true }, 'delete the team'),
          ' if nobody needs it any more.',
        ),
      );
    } else {
      replaceChildren(leaveSlot, leave);
    }
  }

  const leave = h(
    'button',
    { type: 'button', class: 'button danger' },
    buttonText('Leave team', `“${team.name}”`),
  );
  leave.addEventListener('click', async () => {
    const left = await confirmAction({
      title: `Leave ${team.name}?`,
      body: `You lose access to the projects of ${team.name} at once; an owner can invite you again.`,
      confirm: 'Leave team',
      busy: 'Leaving…',
      trigger: leave,
      action: () => api('DELETE', `/api/v1/teams/${teamId}/membership`),
    });
    if (!left) return;
    await context.reloadTeams();
    announce(`You left ${team.name}`);
    context.navigate('/');
  });

  replaceChildren(
    main,
    teamHeader(team, 'people', [
      h('span', { class: 'plan' }, team.plan),
      ' ',
      manages ? 'You manage this team' : 'You are a member',
    ]),
    notice,
    titledSection(
      'section',
      'members',
      'Members',
      manages ? null : muted('Team owners invite people, change roles and remove members.'),
      members,
    ),
    invitations?.element,
    team.role
      ? titledSection(
          'card leave',
          'leave',
          'Leave the team',
          muted('Your account stays; only your membership of this team ends.'),
          leaveSlot,
        )
      : null,
  );
  await Promise.all([loadMembers(), invitations?.load()]);
}
