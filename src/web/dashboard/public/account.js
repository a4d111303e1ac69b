// @ts-check
import { api } from './api.js';
import { announce, copyText, h, replaceChildren, time } from './dom.js';
import { heading, pageTitle } from './views.js';
import {
  cardSection,
  cell,
  confirmButton,
  dataTable,
  emptyState,
  field,
  formField,
  loadInto,
  muted,
  newPasswordField,
  oneTimeSecret,
  submitForm,
} from './widgets.js';

/**
 * Your account: change your password, and your API tokens (create, with an expiry and a scope:
 * the secret shown once; list; revoke). The CLI docs send people here for a token.
 */

/** The expiries offered for a new token, in days ('' never expires). */
const TOKEN_EXPIRIES = [
  ['', 'Never'],
  ['7', '7 days'],
  ['30', '30 days'],
  ['90', '90 days'],
  ['365', '1 year'],
];

/** @typedef {import('./types.js').Token} Token */

/** @param {import('./types.js').ViewContext} context */
export async function renderAccount({ main, me }) {
  pageTitle('Account');
  const tokens = tokenSection();
  replaceChildren(
    main,
    heading('Account', h('p', { class: 'subtitle' }, me?.email ?? '')),
    passwordSection(),
    tokens.element,
    cliSection(),
  );
  await tokens.load();
}

function passwordSection() {
  const errorSlot = h('div', { class: 'slot', id: 'password-result' });
  const current = field('current-password', 'Current password', {
    type: 'password',
    autocomplete: 'current-password',
    required: true,
    maxlength: 1024,
  });
  const next = newPasswordField(
    'new-password',
    'New password',
    'At least 12 characters. Your other sessions are signed out; API tokens keep working.',
  );
  const form = submitForm(
    {
      errorSlot,
      submitLabel: 'Change password',
      busy: 'Changing…',
      work: async () => {
        await api('PUT', '/api/v1/me/password', {
          currentPassword: current.input.value,
          newPassword: next.input.value,
        });
        form.reset();
        replaceChildren(
          errorSlot,
          h(
            'div',
            { class: 'banner banner-success', role: 'status' },
            h('p', { class: 'banner-title' }, 'Password changed'),
            h('p', {}, 'Your other sessions were signed out; this one and your API tokens keep working.'),
          ),
        );
        announce('Password changed');
      },
      onError: (error) => {
        current.input.value = '';
        current.input.focus();
        return error.code === 'wrong_current_password'
          ? 'The current password is not right'
          : 'The password was not changed';
      },
    },
    current.element,
    next.element,
  );
  return cardSection('password', 'Password', errorSlot, form);
}

function tokenSection() {
  const created = h('div', { class: 'slot' });
  const listSlot = h('div', {});
  const errorSlot = h('div', { class: 'slot', id: 'token-result' });
  const name = field(
    'token-name',
    'Token name',
    { type: 'text', required: true, autocomplete: 'off', maxlength: 100, placeholder: 'laptop CLI' },
    'What it is for, so you know which to revoke. Send it as Authorization: Bearer <token>, or set it as KENNEL_TOKEN for the kennel CLI.',
  );
  const expiry = formField({
    id: 'token-expiry',
    label: 'Expires',
    control: h(
      'select',
      { name: 'token-expiry' },
      TOKEN_EXPIRIES.map(([value, label]) => h('option', { value }, label)),
    ),
    hint: 'After that it answers 401 token_expired: make a new one.',
  });
  const scope = formField({
    id: 'token-scope',
    label: 'Scope',
    control: h(
      'select',
      { name: 'token-scope' },
      h('option', { value: 'full' }, 'Full access'),
      h('option', { value: 'read' }, 'Read-only'),
    ),
    hint: 'A read-only token can look (GET) but change nothing.',
  });
  const expiryControl = /** @type {HTMLSelectElement} */ (expiry.control);
  const scopeControl = /** @type {HTMLSelectElement} */ (scope.control);
  const nameInput = name.input;
  const form = submitForm(
    {
      errorSlot,
      submitLabel: 'Create token',
      busy: 'Creating…',
      work: async () => {
        /** @type {import('./types.js').CreatedToken} */
        const token = await api('POST', '/api/v1/tokens', {
          name: nameInput.value.trim(),
          scope: scopeControl.value,
          ...(expiryControl.value ? { expiresInDays: Number(expiryControl.value) } : {}),
        });
        form.reset();
        replaceChildren(
          created,
          oneTimeSecret({
            title: `Token “${token.name}” created`,
            label: 'token',
            value: token.token,
            note: h(
              'strong',
              {},
              'Copy it now: you will not see this again. Kennel keeps only a hash of it.',
            ),
            testid: 'new-token',
          }),
        );
        await load();
      },
      onError: () => 'The token was not created',
    },
    h('div', { class: 'form-grid-wide' }, name.element),
    expiry.element,
    scope.element,
  );

  async function load() {
    /** @type {Token[] | null} */
    const tokens = await loadInto(listSlot, '/api/v1/tokens', 'Your tokens could not be loaded');
    if (!tokens) return;
    replaceChildren(
      listSlot,
      tokens.length === 0
        ? emptyState('No API tokens', 'Create one above for the kennel CLI or a script.')
        : dataTable({
            caption: 'Your API tokens',
            columns: ['Name', 'Starts with', 'Scope', 'Created', 'Expires', 'Last used', ''],
            rows: tokens.map(tokenRow),
          }),
    );
  }

  /** @param {Token} token */
  function tokenRow(token) {
    const revoke = confirmButton(
      { label: 'Revoke', context: `token ${token.name}` },
      {
        title: `Revoke “${token.name}”?`,
        body: 'It stops working at once: the CLI or script using it gets 401 until it has another token.',
        confirm: 'Revoke token',
        busy: 'Revoking…',
        action: () => api('DELETE', `/api/v1/tokens/${token.id}`),
      },
      async () => {
        replaceChildren(created);
        announce(`Token ${token.name} revoked`);
        await load();
        nameInput.focus();
      },
    );
    return h(
      'tr',
      { 'data-token': token.name },
      cell('Name', h('span', { class: 'break' }, token.name)),
      cell('Starts', h('code', {}, `${token.prefix}…`)),
      cell('Scope', token.scope === 'read' ? 'Read-only' : 'Full access'),
      cell('Created', time(token.createdAt)),
      cell('Expires', expiryOf(token)),
      cell('Last used', token.lastUsedAt ? time(token.lastUsedAt) : 'Never'),
      h('td', { class: 'row-actions' }, revoke),
    );
  }

  return {
    element: cardSection(
      'tokens',
      'API tokens',
      muted('Personal tokens for the kennel CLI and the management API. They act as you.'),
      errorSlot,
      created,
      form,
      listSlot,
    ),
    load,
  };
}

/**
 * When a token stops working: never, a date, or "Expired" and the date once past it.
 * @param {Token} token
 */
function expiryOf(token) {
  if (!token.expiresAt) return 'Never';
  return Date.parse(token.expiresAt) <= Date.now()
    ? h('span', { class: 'expired' }, 'Expired ', time(token.expiresAt))
    : time(token.expiresAt);
}

/**
 * The kennel CLI, served by this platform (docs/cli.md, "Install"): the one line that installs it
 * wherever a team's documents live, so nobody reaches for the unrelated `kennel` on npm.
 */
function cliSection() {
  const line = `npm install -g ${location.origin}/cli/kennel-cli.tgz`;
  const copy = h('button', { type: 'button', class: 'button button-small' }, 'Copy');
  copy.addEventListener('click', () => copyText(copy, line, 'Install command'));
  return cardSection(
    'cli',
    'Command-line interface',
    muted(
      'Install the kennel CLI from this platform, in your API’s repository or in CI (Node.js 20 or later):',
    ),
    h(
      'div',
      { class: 'secret-row' },
      h('code', { class: 'secret-value', 'data-testid': 'cli-install' }, line),
      copy,
    ),
    h(
      'p',
      {},
      'Then sign in with ',
      h('code', { class: 'break' }, `kennel login --server ${location.origin}`),
      '.',
    ),
  );
}
