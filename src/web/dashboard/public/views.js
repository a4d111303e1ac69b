// @ts-check
import { ApiError, api, slugPath } from './api.js';
import { errorBanner, h, replaceChildren, time } from './dom.js';
import { cardSection, cell, dataTable, emptyState, muted, titledSection } from './widgets.js';

/** Sign in, the team's projects, and a project's overview with its deploy history. */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {import('./types.js').Project} Project */
/** @typedef {import('./dom.js').Child} Child */

/** @param {...string} parts */
export function pageTitle(...parts) {
  document.title = [...parts, 'Kennel'].join(' · ');
}

/**
 * @param {string} text
 * @param {Child} [extra]
 */
export function heading(text, extra) {
  return h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, text), extra);
}

/**
 * @param {string} current
 * @returns {(href: string, label: string, key: string) => HTMLAnchorElement}
 */
const tabOf = (current) => (href, label, key) =>
  h('a', { href, 'data-link': true, class: 'tab', 'aria-current': current === key ? 'page' : null }, label);

/**
 * The trail from the project list to the page shown.
 * @param {string} here
 */
export function breadcrumbs(here) {
  return h(
    'nav',
    { class: 'breadcrumbs', 'aria-label': 'Breadcrumbs' },
    h(
      'ol',
      {},
      h('li', {}, h('a', { href: '/', 'data-link': true }, 'Projects')),
      h('li', {}, h('span', { 'aria-current': 'page' }, here)),
    ),
  );
}

/**
 * A team's header and its tabs (People, Settings); `current` is the tab shown.
 * @param {import('./types.js').Team} team
 * @param {'people' | 'settings'} current
 * @param {Child} subtitle
 */
export function teamHeader(team, current, subtitle) {
  const tab = tabOf(current);
  return [
    breadcrumbs(`Team ${team.name}`),
    heading(team.name, h('p', { class: 'subtitle' }, subtitle)),
    h(
      'nav',
      { class: 'tabs', 'aria-label': 'Team' },
      tab(`/teams/${team.id}/people`, 'People', 'people'),
      tab(`/teams/${team.id}/settings`, 'Settings', 'settings'),
    ),
  ];
}

/**
 * The project's header and its tabs; `current` is the tab shown.
 * @param {Project} project
 * @param {string} current
 */
export function projectHeader(project, current) {
  const tab = tabOf(current);
  return [
    breadcrumbs(project.name),
    heading(project.name, h('p', { class: 'subtitle' }, h('code', {}, project.slug))),
    h(
      'nav',
      { class: 'tabs', 'aria-label': 'Project' },
      tab(`/projects/${encodeURIComponent(project.slug)}`, 'Overview', 'overview'),
      tab(`/projects/${encodeURIComponent(project.slug)}/deploys`, 'Deploys', 'deploys'),
      tab(`/projects/${encodeURIComponent(project.slug)}/traffic`, 'Traffic', 'traffic'),
      tab(`/projects/${encodeURIComponent(project.slug)}/settings/domains`, 'Settings · Domains', 'domains'),
      tab(`/projects/${encodeURIComponent(project.slug)}/settings/cors`, 'Settings · CORS', 'cors'),
      tab(`/projects/${encodeURIComponent(project.slug)}/settings`, 'Settings · General', 'settings'),
    ),
  ];
}

/** @param {string} host */
export function addressOf(host) {
  return `${location.protocol}//${host}${location.port ? `:${location.port}` : ''}`;
}

/**
 * The sign-in form; "Create an account" is offered only when the platform takes sign-ups.
 * @param {ViewContext} context
 */
export function renderSignIn({ main, signedIn, flash }) {
  pageTitle('Sign in');
  const errorSlot = h(
    'div',
    { class: 'form-error', id: 'sign-in-error' },
    flash ? h('div', { class: 'banner banner-success', role: 'status' }, h('p', {}, flash.message)) : null,
  );
  const email = h('input', {
    id: 'email',
    name: 'email',
    type: 'email',
    autocomplete: 'username',
    required: true,
    maxlength: 254,
    value: flash?.email,
  });
  const password = h('input', {
    id: 'password',
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
    maxlength: 1024,
  });
  const submit = h('button', { type: 'submit', class: 'button button-primary button-block' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'card stack',
      'aria-describedby': 'sign-in-error',
      /** @param {SubmitEvent} event */
      async onsubmit(event) {
        event.preventDefault();
        submit.disabled = true;
        submit.textContent = 'Signing in…';
        replaceChildren(errorSlot);
        try {
          const session = await api('POST', '/api/v1/session', {
            email: email.value.trim(),
            password: password.value,
          });
          await signedIn(session);
        } catch (thrown) {
          const error = /** @type {ApiError} */ (thrown);
          replaceChildren(
            errorSlot,
            errorBanner(
              error,
              error.code === 'invalid_credentials'
                ? 'Could not sign in'
                : error.code === 'too_many_sign_in_attempts'
                  ? 'Too many sign-in attempts'
                  : 'Something went wrong',
            ),
          );
          password.value = '';
          password.focus();
          submit.disabled = false;
          submit.textContent = 'Sign in';
        }
      },
    },
    errorSlot,
    h('div', { class: 'field' }, h('label', { for: 'email' }, 'Email'), email),
    h('div', { class: 'field' }, h('label', { for: 'password' }, 'Password'), password),
    submit,
  );
  const signUp = h('p', { class: 'muted center', 'data-testid': 'sign-up-offer', hidden: true });
  replaceChildren(
    main,
    h(
      'div',
      { class: 'narrow' },
      heading('Sign in to Kennel'),
      h('p', { class: 'lead' }, 'Manage your projects, deploys and custom domains.'),
      form,
      h(
        'p',
        { class: 'muted center' },
        h('a', { href: '/forgot-password', 'data-link': true }, 'Forgot password?'),
      ),
      signUp,
    ),
  );
  if (flash?.email) password.focus();
  else email.focus();
  // Offered only when the operator turned open sign-up on (KENNEL_OPEN_SIGNUP); otherwise an
  // account comes from a team owner's invitation.
  api('GET', '/api/v1/sign-up').then(
    (/** @type {{ open: boolean }} */ policy) => {
      if (!policy.open) return;
      replaceChildren(
        signUp,
        'New here? ',
        h('a', { href: '/sign-up', 'data-link': true }, 'Create an account'),
      );
      signUp.hidden = false;
    },
    () => {
      // Without the answer, the form works as it is; sign-up stays unoffered.
    },
  );
}

/** @param {ViewContext} context */
export async function renderProjects({ main, teams, flash }) {
  pageTitle('Projects');
  /** @type {Project[]} */
  let projects;
  try {
    projects = await api('GET', '/api/v1/projects');
  } catch (error) {
    replaceChildren(main, heading('Projects'), errorBanner(error, 'Your projects could not be loaded'));
    return;
  }
  const teamName = new Map(teams.map((t) => [t.id, t.name]));
  // In no team (left the last one, say), a project has nowhere to go: a team comes first.
  const noTeam = teams.length === 0 && projects.length === 0;
  const list = noTeam
    ? emptyState(
        'You are not in a team yet',
        'Projects belong to a team. ',
        h('a', { href: '/teams/new', 'data-link': true }, 'Create a team'),
        ' to start one of your own, or ask a team owner to invite you to theirs.',
      )
    : projects.length === 0
      ? emptyState(
          'No projects yet',
          h('a', { href: '/new', 'data-link': true }, 'Create a project'),
          ', then deploy an OpenAPI document to publish it.',
        )
      : h(
          'ul',
          { class: 'project-grid', role: 'list' },
          projects.map((p) =>
            h(
              'li',
              { class: 'card project-card' },
              h(
                'h2',
                {},
                h('a', { href: `/projects/${encodeURIComponent(p.slug)}`, 'data-link': true }, p.name),
              ),
              muted(h('code', {}, p.defaultHost)),
              h(
                'p',
                { class: 'meta' },
                h('span', {}, teamName.get(p.teamId) ?? `Team ${p.teamId}`),
                h('span', { class: 'plan' }, p.plan),
                h('span', {}, p.activeDeployId ? `Deploy #${p.activeDeployId}` : 'Not deployed'),
              ),
            ),
          ),
        );
  const create = noTeam
    ? h('a', { href: '/teams/new', 'data-link': true, class: 'button button-primary' }, 'New team')
    : h('a', { href: '/new', 'data-link': true, class: 'button button-primary' }, 'New project');
  replaceChildren(
    main,
    heading('Projects', h('div', { class: 'page-actions' }, create)),
    // What the previous page did (a project deleted from its settings), said once.
    flash
      ? h(
          'div',
          { class: 'banner banner-success', role: 'status', 'data-testid': 'flash' },
          h('p', {}, flash.message),
        )
      : null,
    list,
    teamLinks(teams),
  );
}

/**
 * Each team's people page (members, invitations), from the projects page.
 * @param {import('./types.js').Team[]} teams
 */
function teamLinks(teams) {
  if (teams.length === 0) return null;
  return titledSection(
    'section',
    'teams',
    teams.length === 1 ? 'Your team' : 'Your teams',
    h(
      'ul',
      { class: 'team-links', role: 'list' },
      teams.map((t) =>
        h(
          'li',
          {},
          h('a', { href: `/teams/${t.id}/people`, 'data-link': true }, t.name, ': people and invitations'),
          h('span', { class: 'plan' }, t.plan),
          ' · ',
          h('a', { href: `/teams/${t.id}/settings`, 'data-link': true }, 'settings'),
        ),
      ),
    ),
    h(
      'p',
      {},
      h('a', { href: '/teams', 'data-link': true }, 'All your teams'),
      ' · ',
      h('a', { href: '/teams/new', 'data-link': true }, 'New team'),
    ),
  );
}

/**
 * The page shown when the team or project a page is about could not be loaded: not found (404),
 * or the API's error.
 * @param {HTMLElement} main
 * @param {'team' | 'project'} what
 * @param {unknown} error
 */
export function notFound(main, what, error) {
  const missing = error instanceof ApiError && error.status === 404;
  const title = `${what[0].toUpperCase()}${what.slice(1)} not found`;
  pageTitle(title);
  replaceChildren(
    main,
    heading(missing ? title : `The ${what} could not be loaded`),
    errorBanner(error, missing ? `No such ${what}` : 'Something went wrong'),
    h('p', {}, h('a', { href: '/', 'data-link': true }, 'Back to your projects')),
  );
}

/**
 * @param {HTMLElement} main
 * @param {string} slug
 * @returns {Promise<Project | null>}
 */
async function loadProject(main, slug) {
  try {
    return await api('GET', slugPath(slug));
  } catch (error) {
    notFound(main, 'project', error);
    return null;
  }
}

export { loadProject };

/**
 * @param {ViewContext} context
 * @param {string} slug
 */
export async function renderOverview({ main }, slug) {
  const project = await loadProject(main, slug);
  if (!project) return;
  pageTitle(project.name);
  /** @type {import('./types.js').Deploy[]} */
  let deploys = [];
  /** @type {unknown} */
  let deployError = null;
  try {
    deploys = await api('GET', `${slugPath(slug)}/deploys`);
  } catch (error) {
    deployError = error;
  }
  const active = deploys.find((d) => d.active);
  /**
   * @param {string} label
   * @param {Child} value
   */
  const fact = (label, value) => h('div', { class: 'fact' }, h('dt', {}, label), h('dd', {}, value));
  const address = addressOf(project.defaultHost);
  const history =
    deployError !== null
      ? errorBanner(deployError, 'The deploy history could not be loaded')
      : deploys.length === 0
        ? emptyState(
            'No deploys yet',
            h(
              'a',
              { href: `/projects/${encodeURIComponent(project.slug)}/deploys`, 'data-link': true },
              'Deploy',
            ),
            ' an OpenAPI document to publish the API.',
          )
        : dataTable({
            caption: 'Deploy history, newest first',
            columns: ['Deploy', 'Status', 'Format', 'Origin', 'Deployed'],
            rows: deploys.map((d) =>
              h(
                'tr',
                {},
                cell(
                  'Deploy',
                  `#${d.id}`,
                  d.active ? h('span', { class: 'badge badge-live' }, 'Active') : null,
                ),
                cell(
                  'Status',
                  h(
                    'span',
                    { class: `badge ${d.status === 'succeeded' ? 'badge-verified' : 'badge-failed'}` },
                    d.status === 'succeeded' ? 'Succeeded' : 'Failed',
                  ),
                  d.problems.length
                    ? h(
                        'ul',
                        { class: 'problems' },
                        d.problems.slice(0, 5).map((p) => h('li', {}, p)),
                      )
                    : null,
                ),
                cell('Format', d.sourceFormat.toUpperCase()),
                cell('Origin', h('code', { class: 'break' }, d.originUrl)),
                cell('Deployed', time(d.createdAt)),
              ),
            ),
          });
  replaceChildren(
    main,
    projectHeader(project, 'overview'),
    cardSection(
      'overview',
      'Overview',
      h(
        'dl',
        { class: 'facts' },
        fact('Default address', h('a', { href: address, class: 'break' }, project.defaultHost)),
        fact(
          'Active deploy',
          active ? h('span', {}, `#${active.id} · `, time(active.createdAt)) : 'None yet',
        ),
        fact('Plan', h('span', { class: 'plan' }, project.plan)),
        fact('Primary domain', project.primaryDomain ? h('code', {}, project.primaryDomain) : 'None'),
        fact('Origin', h('code', { class: 'break', 'data-testid': 'origin' }, project.originUrl)),
      ),
    ),
    titledSection('section', 'deploys', 'Deploy history', history),
  );
}
