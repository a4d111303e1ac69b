// @ts-check
import { api } from './api.js';
import { announce, h, replaceChildren, time } from './dom.js';
import {
  cardSection,
  cell,
  confirmButton,
  dataTable,
  emptyState,
  inlineForm,
  loadInto,
  oneTimeSecret,
} from './widgets.js';

/** @typedef {import('./types.js').Invitation} Invitation */
/** @typedef {import('./types.js').Team} Team */

/** How each invitation status reads. */
export const INVITATION_STATUS = {
  pending: { label: 'Pending', badge: 'badge-issuing' },
  accepted: { label: 'Accepted', badge: 'badge-live' },
  revoked: { label: 'Revoked', badge: 'badge-unverified' },
  expired: { label: 'Expired', badge: 'badge-unverified' },
};

/**
 * Owners invite by email (the one-time link shown to copy, and whether it was mailed) and see
 * every invitation with its status in words; pending ones can be revoked.
 * @param {Team} team
 * @param {HTMLElement} notice
 */
export function invitationSection(team, notice) {
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
        ? confirmButton(
            { label: 'Revoke', context: `the invitation for ${invitation.email}`, danger: true },
            {
              title: `Revoke the invitation for ${invitation.email}?`,
              body: 'Its link stops working at once. You can invite them again later.',
              confirm: 'Revoke invitation',
              busy: 'Revoking…',
              action: () => api('DELETE', `/api/v1/teams/${team.id}/invitations/${invitation.id}`),
            },
            async () => {
              announce(`Invitation for ${invitation.email} revoked`);
              await load();
            },
          )
        : null;
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
 * about the address, so it cannot add an account that never proved its email (docs/decisions/accounts-and-sign-in.md).
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
