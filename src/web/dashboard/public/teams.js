// @ts-check
import { api } from './api.js';
import { announce, errorBanner, h, replaceChildren } from './dom.js';
import { breadcrumbs, heading, pageTitle } from './views.js';
import { creationForm, dataTable, emptyState, formField } from './widgets.js';

/**
 * Your teams (/teams) and a new one (/teams/new, POST /api/v1/teams: you become its owner, on the
 * Free plan). Someone in no team (who left their last one, say) is offered to create one here.
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {import('./types.js').Team} Team */

const ROLE_WORDS = { owner: 'Owner', member: 'Member' };

/**
 * What someone in no team can do: create one, or be invited to one.
 * @param {string} title
 */
export function noTeamOffer(title) {
  return emptyState(
    title,
    'Projects belong to a team. ',
    h('a', { href: '/teams/new', 'data-link': true }, 'Create a team'),
    ' to start one of your own, or ask a team owner to invite you to theirs.',
  );
}

/** @param {ViewContext} context */
export function renderTeams({ main, teams, me, flash }) {
  pageTitle('Teams');
  const create = h(
    'a',
    { href: '/teams/new', 'data-link': true, class: 'button button-primary' },
    'New team',
  );
  const list =
    teams.length === 0
      ? noTeamOffer('You are not in a team')
      : dataTable({
          caption: me?.isAdmin ? 'Every team (you are a platform admin)' : 'Your teams',
          columns: ['Team', 'Plan', 'Your role', ''],
          rows: teams.map((t) =>
            h(
              'tr',
              { 'data-team': t.name },
              h(
                'td',
                { 'data-label': 'Team' },
                h('a', { href: `/teams/${t.id}/people`, 'data-link': true }, t.name),
              ),
              h('td', { 'data-label': 'Plan' }, h('span', { class: 'plan' }, t.plan)),
              h('td', { 'data-label': 'Your role' }, t.role ? ROLE_WORDS[t.role] : 'Platform admin'),
              h(
                'td',
                { class: 'row-actions' },
                h(
                  'a',
                  { href: `/teams/${t.id}/settings`, 'data-link': true },
                  'Settings',
                  h('span', { class: 'visually-hidden' }, ` of ${t.name}`),
                ),
              ),
            ),
          ),
        });
  replaceChildren(
    main,
    breadcrumbs('Teams'),
    heading('Teams', h('div', { class: 'page-actions' }, create)),
    h(
      'p',
      { class: 'lead' },
      'A team holds projects and the people who work on them. Its owners invite people and manage its settings.',
    ),
    flash ? h('div', { class: 'banner banner-success', role: 'status' }, h('p', {}, flash.message)) : null,
    list,
  );
}

/** @param {ViewContext} context */
export function renderNewTeam({ main, navigate, reloadTeams }) {
  pageTitle('New team');
  const name = formField({
    id: 'team-name',
    label: 'Name',
    control: h('input', { name: 'name', type: 'text', maxlength: 100, autocomplete: 'off', required: true }),
    hint: 'How the team is shown to its people, for example “Shop team”. You can rename it later.',
  });
  const { form, formError, submit } = creationForm(
    { id: 'new-team', title: 'Team details', submitLabel: 'Create team', onsubmit: create },
    name.element,
  );
  replaceChildren(
    main,
    breadcrumbs('New team'),
    heading('New team'),
    h(
      'p',
      { class: 'lead' },
      'You become its owner, on the Free plan. Then invite people and create its projects.',
    ),
    form,
  );
  name.control.focus();

  /** @param {SubmitEvent} event */
  async function create(event) {
    event.preventDefault();
    name.clear();
    replaceChildren(formError);
    const input = /** @type {HTMLInputElement} */ (name.control);
    if (input.value.trim() === '') {
      name.showError({ message: 'Enter a name for the team.' });
      input.focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = 'Creating…';
    try {
      /** @type {Team} */
      const team = await api('POST', '/api/v1/teams', { name: input.value.trim() });
      await reloadTeams().catch(() => {}); // the header catches up on the next load
      announce(`Team ${team.name} created.`);
      navigate(`/teams/${team.id}/people`);
    } catch (error) {
      const apiError = /** @type {{ code?: string, message?: string }} */ (error);
      if (apiError.code === 'validation_failed') {
        name.showError(apiError);
        input.focus();
      } else {
        replaceChildren(formError, errorBanner(error, 'The team was not created'));
      }
      submit.disabled = false;
      submit.textContent = 'Create team';
    }
  }
}
