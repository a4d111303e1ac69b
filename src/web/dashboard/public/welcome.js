// @ts-check
import { api } from './api.js';
import { errorBanner, h, replaceChildren, time } from './dom.js';
import { heading, pageTitle } from './views.js';
import { cardSection, emailField, nameField, newPasswordField, submitForm } from './widgets.js';

/**
 * The pages reached without an account: accepting an invitation, setting a password from a reset
 * link, and open sign-up. Links carry their token in the URL fragment (#token=…), which the browser
 * never sends to the server nor in a Referer (docs/decisions/dashboard.md); it is read here and sent only in
 * the POST body.
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */

/**
 * @param {HTMLElement} main
 * @param {string} title
 * @param {string} lead
 * @param {...import('./dom.js').Child} rest
 */
function page(main, title, lead, ...rest) {
  pageTitle(title);
  replaceChildren(main, h('div', { class: 'narrow' }, heading(title), h('p', { class: 'lead' }, lead), rest));
}

/**
 * A guest page's form: a card with the API's error on top (the form is described by it), the
 * fields, and a full-width submit button that is busy while `work` runs.
 * @param {{ errorId: string, submitLabel: string, busy: string, work: () => Promise<void>,
 *   onError: (error: any) => string | null }} options
 * @param {...import('./dom.js').Child} fields
 */
function cardForm({ errorId, submitLabel, busy, work, onError }, ...fields) {
  const errorSlot = h('div', { class: 'slot', id: errorId });
  const options = { className: 'card stack', errorSlot, submitLabel, busy, work, onError, block: true };
  return submitForm(options, errorSlot, fields);
}

/**
 * The token of the link this page was opened with (such as /invitations/accept#token=kin_…), or
 * null, the page then saying that the link is incomplete (cut when pasted, say): nothing to send.
 * @param {HTMLElement} main
 * @param {string} title
 * @param {string} prefix
 * @param {string} what
 */
function linkToken(main, title, prefix, what) {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
  if (token.startsWith(prefix)) return token;
  page(
    main,
    title,
    `This ${what} link is incomplete: it should end with #token= and the token.`,
    h(
      'div',
      { class: 'banner banner-error', role: 'alert' },
      h('p', { class: 'banner-title' }, 'No token in this link'),
      h('p', {}, `Open the whole ${what} link you were sent, or ask a team owner for a new one.`),
    ),
  );
  return null;
}

/**
 * What the invitation is for, before anyone accepts: the team, who invited, which email and role.
 * @param {import('./types.js').InvitationDetails} details
 */
function invitationFacts(details) {
  const inviter = details.invitedBy
    ? details.invitedBy.name
      ? `${details.invitedBy.name} (${details.invitedBy.email})`
      : details.invitedBy.email
    : 'A team owner';
  /**
   * @param {string} label
   * @param {import('./dom.js').Child} value
   * @param {string} testid
   */
  const fact = (label, value, testid) =>
    h('div', { class: 'fact' }, h('dt', {}, label), h('dd', { 'data-testid': testid }, value));
  return cardSection(
    'invitation',
    `${inviter} invites you to the team “${details.teamName}”`,
    h(
      'dl',
      { class: 'facts' },
      fact('Team', details.teamName, 'invitation-team'),
      fact('Invited by', inviter, 'invitation-inviter'),
      fact('Invited email', h('span', { class: 'break' }, details.email), 'invitation-email'),
      fact('Role', details.role === 'owner' ? 'Owner' : 'Member', 'invitation-role'),
      fact('Link works until', time(details.expiresAt), 'invitation-expires'),
    ),
  );
}

/**
 * Accepts an invitation: a new account (name and password) or, when the email already has an
 * account, that account's password. The API decides which: a wrong password for an existing
 * account answers invalid_credentials, and the form then asks for that account's password. Then
 * the person is signed in and taken to the team. The page first reads what the link is for (the
 * team, who invited, which email); a link that no longer works says so instead of offering a form.
 * @param {ViewContext} context
 */
export async function renderAcceptInvitation({ main, signedIn, navigate, setFlash }) {
  const title = 'Join a team on Kennel';
  const token = linkToken(main, title, 'kin_', 'invitation');
  if (!token) return;
  /** @type {import('./types.js').InvitationDetails} */
  let details;
  try {
    details = await api('POST', '/api/v1/invitations/inspect', { token });
  } catch (error) {
    const code = /** @type {{ code?: string }} */ (error).code;
    page(
      main,
      title,
      code === 'invitation_not_valid'
        ? 'This invitation link cannot be used.'
        : 'The invitation could not be read.',
      errorBanner(
        error,
        code === 'invitation_not_valid' ? 'This invitation link does not work' : 'Something went wrong',
      ),
    );
    return;
  }
  const existing = h('input', { id: 'has-account', type: 'checkbox' });
  const name = nameField();
  const password = newPasswordField('password', 'Choose a password', 'At least 12 characters.');
  const passwordLabel = /** @type {HTMLLabelElement} */ (password.element.querySelector('label'));
  const passwordHint = /** @type {HTMLElement} */ (password.element.querySelector('.hint'));

  /** @param {boolean} hasAccount */
  function setMode(hasAccount) {
    existing.checked = hasAccount;
    name.element.hidden = hasAccount;
    name.input.required = !hasAccount;
    passwordLabel.textContent = hasAccount ? 'Your Kennel password' : 'Choose a password';
    password.input.autocomplete = hasAccount ? 'current-password' : 'new-password';
    passwordHint.textContent = hasAccount
      ? 'The password of the account this email already has; nothing else about it changes.'
      : 'At least 12 characters.';
  }
  existing.addEventListener('change', () => setMode(existing.checked));

  const form = cardForm(
    {
      errorId: 'accept-error',
      submitLabel: 'Join the team',
      busy: 'Joining…',
      work: async () => {
        /** @type {{ email: string, teamId: number }} */
        const accepted = await api('POST', '/api/v1/invitations/accept', {
          token,
          password: password.input.value,
          ...(existing.checked ? {} : { name: name.input.value.trim() }),
        });
        const to = `/teams/${accepted.teamId}/people`;
        try {
          const session = await api('POST', '/api/v1/session', {
            email: accepted.email,
            password: password.input.value,
          });
          await signedIn(session, to);
        } catch (error) {
          // Joined, but signing in did not work now (too many attempts, say): sign in by hand.
          setFlash({
            message: `You joined the team. Sign in to continue (${/** @type {Error} */ (error).message})`,
            email: accepted.email,
          });
          navigate(`/sign-in?next=${encodeURIComponent(to)}`, { replace: true });
        }
      },
      onError: (error) => {
        password.input.value = '';
        password.input.focus();
        if (error.code === 'invalid_credentials') {
          // The invited email has an account, and this is not its password.
          setMode(true);
          return 'This email already has a Kennel account: enter its password';
        }
        return error.code === 'invitation_not_valid'
          ? 'This invitation link does not work'
          : error.code === 'email_not_proved'
            ? 'This invitation cannot add your account'
            : 'Could not join the team';
      },
    },
    h(
      'div',
      { class: 'check' },
      existing,
      h('label', { for: 'has-account' }, 'I already have a Kennel account with this email'),
    ),
    name.element,
    password.element,
  );
  page(
    main,
    title,
    `Create your account for ${details.email} to join “${details.teamName}”, or use the one you have.`,
    invitationFacts(details),
    form,
  );
  name.input.focus();
}

/**
 * Sets a new password from a reset link, then sends the person to sign in with it.
 * @param {ViewContext} context
 */
export function renderResetPassword({ main, navigate, setFlash }) {
  const title = 'Set a new password';
  const token = linkToken(main, title, 'krs_', 'password reset');
  if (!token) return;
  const password = newPasswordField(
    'new-password',
    'New password',
    'At least 12 characters. Every session of your account is signed out and its API tokens are revoked.',
  );
  const form = cardForm(
    {
      errorId: 'reset-error',
      submitLabel: 'Set password',
      busy: 'Setting…',
      work: async () => {
        /** @type {import('./types.js').PasswordResetDone} */
        const done = await api('POST', '/api/v1/password-reset', {
          token,
          password: password.input.value,
        });
        setFlash({
          message: `Your new password is set: ${done.sessionsEnded} session(s) signed out and ${done.tokensRevoked} API token(s) revoked (make new ones where you used them). Sign in with it.`,
          email: done.email,
        });
        navigate('/sign-in', { replace: true });
      },
      onError: (error) => {
        password.input.focus();
        return error.code === 'reset_link_not_valid'
          ? 'This reset link does not work'
          : error.code === 'reset_link_outdated'
            ? 'This reset link no longer holds'
            : 'The password was not set';
      },
    },
    password.element,
  );
  page(main, title, 'This link works once: a team owner made it for you, or you asked for it by mail.', form);
  password.input.focus();
}

/**
 * Open sign-up (KENNEL_OPEN_SIGNUP=on): an account and a team of its own, then signed in. When
 * sign-up is closed the API's sign_up_closed message says what to do instead.
 * @param {ViewContext} context
 */
export function renderSignUp({ main, signedIn }) {
  const email = emailField();
  const name = nameField();
  const password = newPasswordField('password', 'Password', 'At least 12 characters.');
  const form = cardForm(
    {
      errorId: 'sign-up-error',
      submitLabel: 'Create account',
      busy: 'Creating…',
      work: async () => {
        const credentials = { email: email.input.value.trim(), password: password.input.value };
        await api('POST', '/api/v1/users', { ...credentials, name: name.input.value.trim() });
        await signedIn(await api('POST', '/api/v1/session', credentials), '/');
      },
      onError: (error) =>
        error.code === 'sign_up_closed'
          ? 'Sign-up is closed'
          : error.code === 'email_taken'
            ? 'This email already has an account'
            : 'The account was not created',
    },
    email.element,
    name.element,
    password.element,
  );
  page(
    main,
    'Create an account',
    'An account and a team of your own, for your projects.',
    form,
    h(
      'p',
      { class: 'muted center' },
      'Have an account? ',
      h('a', { href: '/sign-in', 'data-link': true }, 'Sign in'),
    ),
  );
  email.input.focus();
}

/**
 * "Forgot password?": with mail (SMTP_URL) a form that mails a reset link, answered the same for
 * any email; without, who to ask instead (a team owner's reset link, or the operator's command).
 * @param {ViewContext} context
 */
export async function renderForgotPassword({ main }) {
  const title = 'Forgot password?';
  const back = h(
    'p',
    { class: 'muted center' },
    h('a', { href: '/sign-in', 'data-link': true }, 'Back to sign in'),
  );
  /** @type {{ byMail: boolean }} */
  let policy;
  try {
    policy = await api('GET', '/api/v1/password-reset/policy');
  } catch (error) {
    page(
      main,
      title,
      'The platform could not be asked how to reset a password.',
      errorBanner(error, 'Try again later'),
      back,
    );
    return;
  }
  if (!policy.byMail) {
    page(
      main,
      title,
      'This Kennel sends no mail, so it cannot mail you a reset link.',
      h(
        'div',
        { class: 'card stack', 'data-testid': 'ask-for-reset' },
        h(
          'p',
          {},
          'Ask an owner of your team: on the team’s People page they can make a password reset link for you.',
        ),
        h(
          'p',
          {},
          'No team owner can help (you are the platform admin, say)? The operator runs ',
          h('code', {}, 'npm run reset-password -- <your email>'),
          ' on the server.',
        ),
      ),
      back,
    );
    return;
  }
  const email = emailField();
  const done = h('div', { class: 'slot', role: 'status' });
  const form = cardForm(
    {
      errorId: 'forgot-error',
      submitLabel: 'Mail me a reset link',
      busy: 'Sending…',
      work: async () => {
        /** @type {{ message: string }} */
        const answer = await api('POST', '/api/v1/password-reset/request', {
          email: email.input.value.trim(),
        });
        replaceChildren(
          done,
          h(
            'div',
            { class: 'banner banner-success' },
            h('p', { class: 'banner-title' }, 'Check your mail'),
            h('p', {}, answer.message),
          ),
        );
      },
      onError: (error) =>
        error.code === 'too_many_reset_requests' ? 'Too many requests' : 'No link was sent',
    },
    email.element,
  );
  page(main, title, 'We mail a link that sets a new password to your account’s email.', done, form, back);
  email.input.focus();
}
