// @ts-check
import { api } from './api.js';
import { announce, h, replaceChildren, time } from './dom.js';
import { cardSection, cell, confirmButton, dataTable, fieldForm, loadInto, muted } from './widgets.js';

/**
 * A team's private origins, for platform admins: the origin grants that let the team's projects
 * reach a loopback or private address (docs/security.md), listed with Revoke, and a form to grant
 * one. The API lets only platform admins list or change grants
 * (src/platform/api/routes/origin-grants.ts), so nobody else is shown the section.
 */

/** @typedef {import('./types.js').Team} Team */
/** @typedef {{ id: number, teamId: number, teamName: string, origin: string,
 *   grantedBy: string | null, createdAt: string }} OriginGrant */

/** The grant of every origin of the operator's KENNEL_ORIGIN_ALLOWLIST (origin-grants.ts). */
const ALLOWLIST_GRANT = 'KENNEL_ORIGIN_ALLOWLIST';

/** The section's anchor, which links to it use. */
const ANCHOR = 'private-origins';

/**
 * Where a platform admin allows `origin` for team `teamId`: the team's settings, at this section,
 * with the origin filled in.
 * @param {number} teamId
 * @param {string} origin
 */
export function originGrantHref(teamId, origin) {
  return `/teams/${teamId}/settings?grant=${encodeURIComponent(origin)}#${ANCHOR}`;
}

/**
 * Under a refused origin (origin_not_allowed) a platform admin gets a link to allow it for the
 * team; anyone else has the API's message, which says to ask a platform admin.
 * @param {{ code?: string }} error
 * @param {{ isAdmin: boolean } | null | undefined} me
 * @param {number} teamId
 * @param {string} url the refused origin URL
 */
export function originGrantLink(error, me, teamId, url) {
  if (error.code !== 'origin_not_allowed' || !me?.isAdmin) return null;
  let origin = '';
  try {
    origin = new URL(url).origin;
  } catch {
    return null;
  }
  return h(
    'p',
    { 'data-testid': 'origin-grant-link' },
    'As a platform admin you can ',
    h('a', { href: originGrantHref(teamId, origin), 'data-link': true }, 'allow this origin for the team'),
    '.',
  );
}

/**
 * The section, for platform admins only (null for anyone else).
 * @param {{ team: Team, me: { isAdmin: boolean } }} context
 */
export function originGrantsSection({ team, me }) {
  if (!me.isAdmin) return null;
  const listSlot = h('div', {}, h('p', { class: 'loading' }, 'Loading private origins…'));
  const input = h('input', {
    name: 'origin',
    type: 'url',
    inputmode: 'url',
    maxlength: 2048,
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const { form } = fieldForm({
    id: 'origin-grant',
    label: 'Allow a private origin',
    control: input,
    hint: `scheme://host:port of a loopback or private address or an internal name, as in the refused origin’s message. ${team.name}’s projects may then use it; other teams may not use its host.`,
    submitLabel: 'Allow',
    busy: 'Allowing…',
    async work(done) {
      /** @type {OriginGrant} */
      const grant = await api('POST', '/api/v1/origin-grants', {
        teamId: team.id,
        origin: input.value.trim(),
      });
      input.value = '';
      replaceChildren(done, `${team.name}’s projects may now use ${grant.origin}.`);
      await refresh();
    },
  });
  const params = new URLSearchParams(location.search);
  input.value = params.get('grant') ?? '';
  const section = cardSection(
    'origin-grants',
    'Private origins',
    muted(
      'A project’s origin must be a public address unless a platform admin allows the team a private one (loopback, 10.x, a name on the internal network). Revoking stops forwarding to it at once.',
    ),
    listSlot,
    form,
  );
  section.id = ANCHOR;
  void refresh().then(() => {
    if (location.hash !== `#${ANCHOR}` || !section.isConnected) return;
    section.scrollIntoView();
    input.focus();
  });
  return section;

  async function refresh() {
    /** @type {OriginGrant[] | null} */
    const all = await loadInto(listSlot, '/api/v1/origin-grants', 'The private origins could not be loaded');
    if (!all) return;
    const grants = all.filter((g) => g.teamId === team.id);
    replaceChildren(
      listSlot,
      grants.length === 0
        ? h('p', { 'data-testid': 'origin-grants-none' }, `${team.name} has no private origin.`)
        : dataTable({
            caption: `Private origins of ${team.name}`,
            columns: ['Origin', 'Granted by', 'Granted', ''],
            className: 'origin-grants',
            rows: grants.map(row),
          }),
    );
  }

  /** @param {OriginGrant} grant */
  function row(grant) {
    const name = grant.origin === ALLOWLIST_GRANT ? 'every origin of KENNEL_ORIGIN_ALLOWLIST' : grant.origin;
    const revoke = confirmButton(
      { label: 'Revoke', context: name, danger: true },
      {
        title: `Revoke ${name}?`,
        body: `${team.name}’s projects on it stop being forwarded at once, and may not be pointed at it again.`,
        confirm: 'Revoke',
        busy: 'Revoking…',
        focusAfter: () => input,
        action: () => api('DELETE', `/api/v1/origin-grants/${grant.id}`),
      },
      async () => {
        announce(`${name} revoked.`);
        await refresh();
      },
    );
    return h(
      'tr',
      { 'data-origin': grant.origin },
      cell('Origin', h('code', { class: 'break' }, name)),
      cell('Granted by', grant.grantedBy ?? 'Kennel, at its first start'),
      cell('Granted', time(grant.createdAt)),
      cell('', revoke),
    );
  }
}
