// @ts-check
import { api } from './api.js';
import { announce, h, replaceChildren, time } from './dom.js';
import { notFound, pageTitle, teamHeader } from './views.js';
import {
  buttonText,
  cardSection,
  cell,
  confirmAction,
  dataTable,
  emptyState,
  inlineForm,
  loadInto,
  oneTimeSecret,
  submitting,
} from './widgets.js';

/**
 * A team's people: members with their roles and, for owners (and platform admins), role changes,
 * removal, password reset links and invitations. Anyone may leave. Every action is the management
 * API's, so its checks (last owner, cross-team) and its messages are the ones shown.
 */

/** @typedef {import('./types.js').Member} Member */
/** @typedef {import('./types.js').Invitation} Invitation */
/** @typedef {import('./types.js').Team} Team */

/** How each invitation status reads. */
export const INVITATION_STATUS = {
  pending: { label: 'Pending', badge: 'badge-issuing' },
  accepted: { label: 'Accepted', badge: 'badge-live' },
  revoked: { label: 'Revoked', badge: 'badge-unverified' },
  expired: { label: 'Expired', badge: 'badge-unverified' },
};

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
    if (list) replaceChildren(members, memberTable(list));
  }

  /** @param {Member[]} list */
  function memberTable(list) {
    return dataTable({
      caption: `Members of ${team.name}`,
      columns: ['Name', 'Email', 'Role', 'Joined', ...(manages ? [''] : [])],
      rows: list.map(memberRow),
    });
  }

  /** @param {Member} member */
  function memberRow(member) {
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
      manages ? h('td', { class: 'row-actions' }, memberActions(member, who, isMe)) : null,
    );
  }

  /**
   * @param {Member} member
   * @param {string} who
   * @param {boolean} isMe
   */
  function memberActions(member, who, isMe) {
    const otherRole = member.role === 'owner' ? 'member' : 'owner';
    const role = h(
      'button',
      { type: 'button', class: 'button button-small' },
      buttonText(otherRole === 'owner' ? 'Make owner' : 'Make member', `(${who})`),
    );
    role.addEventListener('click', async () => {
      const changed = await confirmAction({
        title: `Make ${who} ${ROLE_LABELS[otherRole].toLowerCase()}?`,
        body:
          otherRole === 'owner'
            ? `${member.email} will be able to invite and remove people, change roles and create password reset links.`
            : `${member.email} keeps access to the team's projects but can no longer manage its people.`,
        confirm: 'Change role',
        busy: 'Changing…',
        danger: false,
        trigger: role,
        action: () =>
          api('PUT', `/api/v1/teams/${teamId}/members/${member.userId}/role`, { role: otherRole }),
      });
      if (!changed) return;
      announce(`${who} is now ${ROLE_LABELS[otherRole].toLowerCase()}`);
      // Demoting yourself ends your owner actions: draw the page again as a member sees it.
      if (isMe) await renderTeamPeople(context, teamIdParam);
      else await loadMembers();
    });
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
    const remove = isMe
      ? null
      : h('button', { type: 'button', class: 'button button-small danger' }, buttonText('Remove', who));
    remove?.addEventListener('click', async () => {
      const removed = await confirmAction({
        title: `Remove ${who} from ${team.name}?`,
        body: `${member.email} loses access to the team's projects at once. Their account and API tokens stay; invite them again to bring them back.`,
        confirm: 'Remove member',
        busy: 'Removing…',
        trigger: remove,
        action: () => api('DELETE', `/api/v1/teams/${teamId}/members/${member.userId}`),
      });
      if (!removed) return;
      announce(`${who} removed from ${team.name}`);
      await loadMembers();
    });
    return h('div', { class: 'actions' }, role, reset, remove);
  }

  const leave = h('button', { type: 'button', class: 'button danger' }, 'Leave team');
  leave.addEventListener('click', async () => {
    const left = await confirmAction({
      title: `Leave ${team.name}?`,
      body: "You lose access to the team's projects at once; an owner can invite you again. A team's last owner cannot leave: make someone else owner first.",
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
    h(
      'section',
      { class: 'section', 'aria-labelledby': 'members-title' },
      h('h2', { id: 'members-title' }, 'Members'),
      manages
        ? null
        : h('p', { class: 'muted' }, 'Team owners invite people, change roles and remove members.'),
      members,
    ),
    invitations?.element,
    team.role
      ? h(
          'section',
          { class: 'card leave', 'aria-labelledby': 'leave-title' },
          h('h2', { id: 'leave-title' }, 'Leave the team'),
          h('p', { class: 'muted' }, 'Your account stays; only your membership of this team ends.'),
          h('div', {}, leave),
        )
      : null,
  );
  await Promise.all([loadMembers(), invitations?.load()]);
}

/**
 * Owners invite by email (the one-time link shown to copy, and whether it was mailed) and see
 * every invitation with its status in words; pending ones can be revoked.
 * @param {Team} team
 * @param {HTMLElement} notice
 */
function invitationSection(team, notice) {
  const listSlot = h('div', {});
  const errorSlot = h('div', { class: 'slot' });
  const { form } = inlineForm({
    id: 'invite-email',
    label: 'Email',
    attributes: { name: 'email', type: 'email', maxlength: 254, placeholder: 'ana@example.com' },
    hint: 'They join as a member with a one-time link: mailed to them when this Kennel has a mail server, else shown here for you to pass on.',
    submitLabel: 'Invite',
    busy: 'Inviting…',
    errorSlot,
    async work(email) {
      /** @type {import('./types.js').CreatedInvitation} */
      const invitation = await api('POST', `/api/v1/teams/${team.id}/invitations`, {
        email: email.value.trim(),
      });
      email.value = '';
      replaceChildren(notice, invitationNotice(invitation));
      await load();
    },
    failure: 'The invitation was not sent',
  });

  async function load() {
    /** @type {Invitation[] | null} */
    const list = await loadInto(
      listSlot,
      `/api/v1/teams/${team.id}/invitations`,
      'The invitations could not be loaded',
    );
    if (!list) return;
    replaceChildren(
      listSlot,
      list.length === 0
        ? emptyState('No invitations yet', 'Invite someone by email above.')
        : dataTable({
            caption: `Invitations to ${team.name}, newest first`,
            columns: ['Email', 'Status', 'Sent', 'Expires', ''],
            rows: list.map(invitationRow),
          }),
    );
  }

  /** @param {Invitation} invitation */
  function invitationRow(invitation) {
    const status = INVITATION_STATUS[invitation.status];
    const revoke =
      invitation.status === 'pending'
        ? h(
            'button',
            { type: 'button', class: 'button button-small danger' },
            buttonText('Revoke', `the invitation for ${invitation.email}`),
          )
        : null;
    revoke?.addEventListener('click', async () => {
      const revoked = await confirmAction({
        title: `Revoke the invitation for ${invitation.email}?`,
        body: 'Its link stops working at once. You can invite them again later.',
        confirm: 'Revoke invitation',
        busy: 'Revoking…',
        trigger: revoke,
        action: () => api('DELETE', `/api/v1/teams/${team.id}/invitations/${invitation.id}`),
      });
      if (!revoked) return;
      announce(`Invitation for ${invitation.email} revoked`);
      await load();
    });
    return h(
      'tr',
      { 'data-invitation': invitation.email },
      cell('Email', h('span', { class: 'break' }, invitation.email)),
      cell('Status', h('span', { class: `badge ${status.badge}`, 'data-testid': 'status' }, status.label)),
      cell('Sent', time(invitation.createdAt)),
      cell(
        invitation.status === 'expired' ? 'Expired' : 'Expires',
        invitation.status === 'accepted' || invitation.status === 'revoked'
          ? '—'
          : time(invitation.expiresAt),
      ),
      h('td', { class: 'row-actions' }, revoke),
    );
  }

  return {
    element: cardSection('invitations', 'Invitations', errorSlot, form, listSlot),
    load,
  };
}

/**
 * What inviting did. A mailed link is in the mail only (following it proves the address is
 * theirs). An unmailed one is shown once to pass on, with what it cannot do: it proves nothing
 * about the address, so it cannot add an account that never proved its email (docs/decisions.md).
 * @param {import('./types.js').CreatedInvitation} invitation
 */
export function invitationNotice(invitation) {
  if (invitation.mailed || !invitation.url) {
    const title = `Invitation mailed to ${invitation.email}`;
    announce(title);
    return h(
      'div',
      { class: 'banner banner-success', role: 'status', 'data-testid': 'invitation-mailed' },
      h('p', { class: 'banner-title' }, title),
      h('p', {}, 'The link is only in that mail, so only whoever reads that address can accept it.'),
      h('p', { class: 'small' }, 'Works once, until ', time(invitation.expiresAt), '.'),
    );
  }
  return oneTimeSecret({
    title: `Invitation for ${invitation.email}`,
    label: 'invitation link',
    value: invitation.url,
    note: h(
      'span',
      {},
      'It was not mailed (this Kennel has no mail server, or the server refused it): send the link yourself, over a channel you trust, as it is shown only now. ',
      h(
        'strong',
        {},
        'A link you pass on proves nothing about the address: it cannot add an existing account that never proved its email.',
      ),
      ' For that, the operator sets SMTP_URL so invitations are mailed.',
    ),
    expiresAt: invitation.expiresAt,
    testid: 'invitation-link',
  });
}
