// @ts-check
import { api } from './api.js';
import { errorBanner, h, replaceChildren } from './dom.js';

/** @typedef {import('./domains-api.js').Project} Project */
/** @typedef {import('./domains-api.js').Me} Me */
/** @typedef {import('./domains-api.js').AddedDomain} AddedDomain */

/**
 * Errors the add form explains in its own words, naming what to do on this page (the API's
 * messages are written for every client and may name the CLI).
 * @type {Record<string, (hostname: string) => string>}
 */
const IN_PAGE = {
  domain_already_added: (hostname) =>
    `${hostname} is already a domain of this project: it is in the list below.`,
  deploy_required: () =>
    'This project has no successful deploy yet. Deploy its OpenAPI document first, then add the domain.',
  plan_required: () => 'Custom domains need the Pro plan or above: see the note above the form.',
};

/**
 * The "Add domain" form (seed 001: a paid plan and a successful deploy first). A team without
 * custom domains cannot submit it at all: the fields are disabled and the note says how to
 * upgrade, in the words of who is looking — a platform admin gets the button that changes the
 * plan, anyone else is told to ask one.
 * @param {object} options
 * @param {Project} options.project
 * @param {Me | null} options.me
 * @param {(hostname: string) => Promise<AddedDomain>} options.add
 * @param {(added: AddedDomain) => Promise<void>} options.added after a domain is added
 * @param {() => void} options.upgraded after an admin moved the team to Pro (the page redraws)
 */
export function addDomainForm({ project, me, add, added, upgraded }) {
  const blocked = project.plan === 'free' || project.activeDeployId === null;
  const input = h('input', {
    id: 'new-domain',
    name: 'hostname',
    type: 'text',
    inputmode: 'url',
    autocomplete: 'off',
    autocapitalize: 'off',
    spellcheck: 'false',
    required: true,
    maxlength: 300,
    placeholder: 'shop.example.com',
    'aria-describedby': blocked ? 'add-blocked new-domain-hint' : 'new-domain-hint new-domain-error',
  });
  const fieldError = h('div', { id: 'new-domain-error', class: 'field-error' });
  const addButton = h('button', { type: 'submit', class: 'button button-primary' }, 'Add domain');
  const fields = h(
    'fieldset',
    { class: 'field', disabled: blocked },
    h('legend', { class: 'visually-hidden' }, 'New domain'),
    h('label', { for: 'new-domain' }, 'Hostname'),
    h('div', { class: 'input-row' }, input, addButton),
    h(
      'p',
      { id: 'new-domain-hint', class: 'hint' },
      'A subdomain such as shop.example.com, or an apex domain such as example.com.',
    ),
    fieldError,
  );
  const form = h(
    'form',
    { class: 'add-form', 'aria-labelledby': 'add-domain-title', onsubmit: submit },
    h('h2', { id: 'add-domain-title' }, 'Add domain'),
    blocked ? blockedNote(project, me, upgraded) : null,
    fields,
  );

  /** @param {SubmitEvent} event */
  async function submit(event) {
    event.preventDefault();
    if (blocked) return;
    const hostname = input.value.trim();
    replaceChildren(fieldError);
    input.removeAttribute('aria-invalid');
    if (!hostname) {
      showError('Enter a hostname, for example shop.example.com.');
      return;
    }
    addButton.disabled = true;
    addButton.textContent = 'Adding…';
    try {
      const result = await add(hostname);
      input.value = '';
      await added(result);
    } catch (thrown) {
      const error = /** @type {{ code?: string, message?: string }} */ (thrown);
      showError(IN_PAGE[error.code ?? '']?.(hostname) ?? error.message ?? String(thrown));
    } finally {
      addButton.disabled = false;
      addButton.textContent = 'Add domain';
    }
  }

  /** @param {string} message */
  function showError(message) {
    input.setAttribute('aria-invalid', 'true');
    replaceChildren(fieldError, h('p', { role: 'alert' }, message));
    input.focus();
  }

  return { form, input };
}

/**
 * Why the form is closed and how to open it.
 * @param {Project} project
 * @param {Me | null} me
 * @param {() => void} upgraded
 */
function blockedNote(project, me, upgraded) {
  if (project.plan !== 'free') {
    return h(
      'div',
      { id: 'add-blocked', class: 'banner banner-info', dataset: { testid: 'add-blocked' } },
      h('p', { class: 'banner-title' }, 'Deploy the project first'),
      h(
        'p',
        {},
        'A custom domain needs a successful deploy: deploy the project’s OpenAPI document, then add the domain.',
      ),
    );
  }
  const errorSlot = h('div', {});
  const note = h(
    'div',
    { id: 'add-blocked', class: 'banner banner-info', dataset: { testid: 'add-blocked' } },
    h('p', { class: 'banner-title' }, 'Custom domains need the Pro plan'),
  );
  if (me?.isAdmin) {
    const upgrade = h(
      'button',
      {
        type: 'button',
        class: 'button button-primary',
        async onclick() {
          upgrade.disabled = true;
          upgrade.textContent = 'Moving the team to Pro…';
          try {
            await api('PUT', `/api/v1/teams/${project.teamId}/plan`, { plan: 'pro' });
            upgraded();
          } catch (error) {
            replaceChildren(errorSlot, errorBanner(error, 'The plan was not changed'));
            upgrade.disabled = false;
            upgrade.textContent = 'Move the team to Pro';
          }
        },
      },
      'Move the team to Pro',
    );
    note.append(
      h(
        'p',
        {},
        'This project’s team is on the Free plan. As a platform admin you can change its plan here: moving the team to Pro opens custom domains for all of its projects. Enterprise is set on the team’s ',
        planLink(project),
        '.',
      ),
      h('div', { class: 'actions' }, upgrade),
      errorSlot,
    );
  } else {
    // Who to ask, by name, once the team's members are read (a member sees them; the API
    // decides). Until then, or if they cannot be read, the sentence names the role.
    const who = h(
      'p',
      { dataset: { testid: 'plan-who' } },
      'The team’s owners can arrange it with a platform admin.',
    );
    note.append(
      h(
        'p',
        {},
        'This project’s team is on the Free plan, and only a platform admin can change a team’s plan. Ask one to move the team to Pro; this form opens once it has.',
      ),
      who,
      h('p', {}, 'The plan is shown on the team’s ', planLink(project), '.'),
    );
    void whoToAsk(project.teamId)
      .then((text) => replaceChildren(who, text))
      .catch(() => {});
  }
  return note;
}

/**
 * The link to the team's Plan page (team settings: plan and webhook).
 * @param {Project} project
 */
function planLink(project) {
  return h('a', { href: `/teams/${project.teamId}/settings`, 'data-link': true }, 'Plan page');
}

/**
 * Who can get the plan changed, from where the viewer stands: a team owner asks whoever runs
 * this Kennel (a platform admin); a member asks the team's owners, named.
 * @param {number} teamId
 * @returns {Promise<string>}
 */
async function whoToAsk(teamId) {
  /** @type {[import('./types.js').Team, import('./types.js').Member[]]} */
  const [team, members] = await Promise.all([
    api('GET', `/api/v1/teams/${teamId}`),
    api('GET', `/api/v1/teams/${teamId}/members`),
  ]);
  if (team.role === 'owner')
    return `You own team ${team.name}: ask whoever runs this Kennel (a platform admin) to move it to Pro.`;
  const names = members
    .filter((m) => m.role === 'owner')
    .map((m) => (m.name ? `${m.name} (${m.email})` : m.email));
  const owners =
    names.length <= 1 ? (names[0] ?? 'an owner') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  return `Team ${team.name}’s owners can arrange it with a platform admin: ask ${owners}.`;
}
