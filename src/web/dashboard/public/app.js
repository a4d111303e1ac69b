// @ts-check
import { renderAccount } from './account.js';
import { api, setCsrfToken } from './api.js';
import { renderCorsSettings } from './cors-settings.js';
import { renderDeploys } from './deploys.js';
import { h, replaceChildren } from './dom.js';
import { renderDomains } from './domains.js';
import { renderNewProject } from './new-project.js';
import { renderTeamPeople } from './people.js';
import { renderProjectSettings } from './project-settings.js';
import { renderTeamSettings } from './team-settings.js';
import { renderNewTeam, renderTeams } from './teams.js';
import { renderTraffic } from './traffic.js';
import { renderOverview, renderProjects, renderSignIn } from './views.js';
import {
  renderAcceptInvitation,
  renderForgotPassword,
  renderResetPassword,
  renderSignUp,
} from './welcome.js';

/**
 * The dashboard's shell: who is signed in, the header, and a small router over the History API.
 * Each view renders into <main> and may return a cleanup (the Domains page stops polling).
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {(context: ViewContext, ...params: string[]) => unknown} View */

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const topbar = /** @type {HTMLElement} */ (document.getElementById('topbar'));
/**
 * @type {{ me: import('./types.js').Me | null, teams: import('./types.js').Team[],
 *   cleanup: (() => void) | null, firstRender: boolean, flash: ViewContext['flash'] }}
 */
const state = { me: null, teams: [], cleanup: null, firstRender: true, flash: null };

/**
 * Every client-side page; each path must also be in DASHBOARD_ROUTES (src/web/dashboard/index.ts).
 * `public`: no sign-in needed; `guest`: only signed out (a signed-in visitor goes to /).
 * @type {{ pattern: RegExp, view: View, public?: boolean, guest?: boolean }[]}
 */
const routes = [
  { pattern: /^\/sign-in$/, view: renderSignIn, public: true, guest: true },
  { pattern: /^\/sign-up$/, view: renderSignUp, public: true, guest: true },
  { pattern: /^\/invitations\/accept$/, view: renderAcceptInvitation, public: true },
  { pattern: /^\/reset-password$/, view: renderResetPassword, public: true },
  { pattern: /^\/forgot-password$/, view: renderForgotPassword, public: true, guest: true },
  { pattern: /^\/$/, view: renderProjects },
  { pattern: /^\/account$/, view: renderAccount },
  { pattern: /^\/teams$/, view: renderTeams },
  { pattern: /^\/teams\/new$/, view: renderNewTeam },
  { pattern: /^\/teams\/(\d+)\/people$/, view: renderTeamPeople },
  { pattern: /^\/projects\/([^/]+)$/, view: renderOverview },
  { pattern: /^\/new$/, view: renderNewProject },
  { pattern: /^\/projects\/([^/]+)\/deploys$/, view: renderDeploys },
  { pattern: /^\/projects\/([^/]+)\/traffic$/, view: renderTraffic },
  { pattern: /^\/teams\/(\d+)\/settings$/, view: renderTeamSettings },
  { pattern: /^\/projects\/([^/]+)\/settings\/domains$/, view: renderDomains },
  { pattern: /^\/projects\/([^/]+)\/settings\/cors$/, view: renderCorsSettings },
  { pattern: /^\/projects\/([^/]+)\/settings$/, view: renderProjectSettings },
];

/**
 * @param {string} path
 * @param {{ replace?: boolean }} [options]
 */
export function navigate(path, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

function renderHeader() {
  const nav = [];
  if (state.me) {
    // Each team chip leads to the team's people (members, invitations).
    const teams = state.teams.map((t) =>
      h(
        'a',
        {
          class: 'team-chip',
          href: `/teams/${t.id}/people`,
          'data-link': true,
          title: `Team ${t.name}, ${t.plan} plan: members and invitations`,
        },
        t.name,
        h('span', { class: 'plan' }, t.plan),
      ),
    );
    nav.push(
      h(
        'nav',
        { class: 'topnav', 'aria-label': 'Main' },
        h('a', { href: '/', 'data-link': true }, 'Projects'),
        h('a', { href: '/account', 'data-link': true }, 'Account'),
      ),
      h(
        'div',
        { class: 'account' },
        teams.length ? h('span', { class: 'teams', 'aria-label': 'Your teams' }, teams) : null,
        h('span', { class: 'user', 'aria-label': 'Signed in as' }, state.me.email),
        h('button', { type: 'button', class: 'button button-quiet', onclick: signOut }, 'Sign out'),
      ),
    );
  }
  replaceChildren(
    topbar,
    h(
      'a',
      { class: 'brand', href: '/', 'data-link': true },
      h('span', { class: 'brand-mark', 'aria-hidden': 'true' }),
      'Kennel',
    ),
    nav,
  );
}

async function signOut() {
  try {
    await api('DELETE', '/api/v1/session');
  } catch {
    // Signed out either way: the cookie is gone or was never valid.
  }
  state.me = null;
  state.teams = [];
  setCsrfToken(null);
  navigate('/sign-in');
}

/** Who is signed in: GET /api/v1/session answers 200 either way (a signed-out page fails no request). */
async function loadAccount() {
  /** @type {import('./types.js').SessionState} */
  const session = await api('GET', '/api/v1/session');
  if (!session.signedIn) {
    state.me = null;
    return;
  }
  setCsrfToken(session.csrfToken);
  state.me = { email: session.email ?? '', isAdmin: session.isAdmin === true };
  state.teams = await api('GET', '/api/v1/teams');
}

async function reloadTeams() {
  state.teams = await api('GET', '/api/v1/teams');
  renderHeader();
}

/**
 * A new session (sign-in, accepted invitation, sign-up): to `to`, else the sign-in page's `next`.
 * @param {import('./types.js').Session} session
 * @param {string} [to]
 */
export async function signedIn(session, to) {
  setCsrfToken(session.csrfToken);
  state.me = { email: session.email, isAdmin: session.isAdmin };
  state.teams = await api('GET', '/api/v1/teams');
  const next = to ?? new URLSearchParams(location.search).get('next');
  navigate(next?.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
}

async function render() {
  state.cleanup?.();
  state.cleanup = null;
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const route = routes.find((r) => r.pattern.test(path));
  if (!route) {
    renderHeader();
    replaceChildren(
      main,
      h('h1', {}, 'Page not found'),
      h('p', {}, h('a', { href: '/', 'data-link': true }, 'Back to your projects')),
    );
    return;
  }
  if (!route.public && !state.me) {
    navigate(`/sign-in?next=${encodeURIComponent(location.pathname)}`, { replace: true });
    return;
  }
  if (route.guest && state.me) {
    navigate('/', { replace: true });
    return;
  }
  renderHeader();
  const params = (path.match(route.pattern) ?? []).slice(1).map(decodeURIComponent);
  const flash = state.flash;
  state.flash = null;
  /** @type {ViewContext} */
  const context = {
    main,
    me: state.me,
    teams: state.teams,
    navigate,
    signedIn,
    reloadTeams,
    flash,
    setFlash(message) {
      state.flash = message;
    },
  };
  replaceChildren(main, h('p', { class: 'loading', role: 'status' }, 'Loading…'));
  const cleanup = await route.view(context, ...params);
  state.cleanup = typeof cleanup === 'function' ? /** @type {() => void} */ (cleanup) : null;
  // After a client-side navigation, focus goes to the new page's heading, as a page load would.
  if (!state.firstRender) main.querySelector('h1')?.focus();
  state.firstRender = false;
}

document.addEventListener('click', (event) => {
  const target = /** @type {Element | null} */ (event.target);
  const link = target?.closest?.('a[data-link]');
  if (
    !link ||
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey
  )
    return;
  event.preventDefault();
  const href = link.getAttribute('href') ?? '/';
  if (href !== location.pathname) navigate(href);
});
window.addEventListener('popstate', () => render());
window.addEventListener('kennel:signed-out', () => {
  if (!state.me) return;
  state.me = null;
  navigate(`/sign-in?next=${encodeURIComponent(location.pathname)}`, { replace: true });
});

try {
  await loadAccount();
  await render();
} catch (error) {
  replaceChildren(
    main,
    h('h1', {}, 'The dashboard could not start'),
    h(
      'div',
      { class: 'banner banner-error', role: 'alert' },
      h('p', {}, error instanceof Error ? error.message : String(error)),
      h('p', {}, 'Reload the page to try again.'),
    ),
  );
}
