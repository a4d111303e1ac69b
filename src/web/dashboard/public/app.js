import { api, setCsrfToken } from './api.js';
import { renderDeploys } from './deploys.js';
import { h, replaceChildren } from './dom.js';
import { renderDomains } from './domains.js';
import { renderNewProject } from './new-project.js';
import { renderTeamSettings } from './team-settings.js';
import { renderOverview, renderProjects, renderSignIn } from './views.js';

/**
 * The dashboard's shell: who is signed in, the header, and a small router over the History API.
 * Each view renders into <main> and may return a cleanup (the Domains page stops polling).
 */

const main = document.getElementById('main');
const topbar = document.getElementById('topbar');
const state = { me: null, teams: [], cleanup: null, firstRender: true };

const routes = [
  { pattern: /^\/sign-in$/, view: 'signIn', public: true },
  { pattern: /^\/$/, view: 'projects' },
  { pattern: /^\/projects\/([^/]+)$/, view: 'overview' },
  { pattern: /^\/new$/, view: 'newProject' },
  { pattern: /^\/projects\/([^/]+)\/deploys$/, view: 'deploys' },
  { pattern: /^\/teams\/(\d+)\/settings$/, view: 'teamSettings' },
  { pattern: /^\/projects\/([^/]+)\/settings\/domains$/, view: 'domains' },
];

export function navigate(path, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

function renderHeader() {
  const nav = [];
  if (state.me) {
    const teams = state.teams.map((t) =>
      h(
        'a',
        {
          class: 'team-chip',
          href: `/teams/${t.id}/settings`,
          'data-link': true,
          title: `Team ${t.name}, ${t.plan} plan: settings`,
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

async function loadAccount() {
  try {
    const me = await api('GET', '/api/v1/me');
    setCsrfToken(me.csrfToken);
    state.me = me;
    state.teams = await api('GET', '/api/v1/teams');
  } catch (error) {
    if (error.status !== 401) throw error;
    state.me = null;
  }
}

export async function signedIn(session) {
  setCsrfToken(session.csrfToken);
  state.me = { email: session.email, isAdmin: session.isAdmin };
  state.teams = await api('GET', '/api/v1/teams');
  const next = new URLSearchParams(location.search).get('next');
  navigate(next?.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
}

async function render() {
  state.cleanup?.();
  state.cleanup = null;
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const route = routes.find((r) => r.pattern.test(path));
  if (!route) {
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
  if (route.view === 'signIn' && state.me) {
    navigate('/', { replace: true });
    return;
  }
  renderHeader();
  const params = path.match(route.pattern).slice(1).map(decodeURIComponent);
  const context = { main, me: state.me, teams: state.teams, navigate, signedIn };
  replaceChildren(main, h('p', { class: 'loading', role: 'status' }, 'Loading…'));
  const views = {
    signIn: renderSignIn,
    projects: renderProjects,
    overview: renderOverview,
    domains: renderDomains,
    newProject: renderNewProject,
    deploys: renderDeploys,
    teamSettings: renderTeamSettings,
  };
  state.cleanup = (await views[route.view](context, ...params)) ?? null;
  // After a client-side navigation, focus goes to the new page's heading, as a page load would.
  if (!state.firstRender) main.querySelector('h1')?.focus();
  state.firstRender = false;
}

document.addEventListener('click', (event) => {
  const link = event.target.closest?.('a[data-link]');
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
  if (link.getAttribute('href') !== location.pathname) navigate(link.getAttribute('href'));
});
window.addEventListener('popstate', () => render());
// A page changed a team (its plan): the header's chip shows it at once.
window.addEventListener('kennel:team-changed', (event) => {
  const changed = event.detail;
  state.teams = state.teams.map((t) => (t.id === changed.id ? { ...t, plan: changed.plan } : t));
  renderHeader();
});
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
      h('p', {}, error.message),
      h('p', {}, 'Reload the page to try again.'),
    ),
  );
}
