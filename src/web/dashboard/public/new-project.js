// @ts-check
import { api } from './api.js';
import { announce, errorBanner, h, replaceChildren } from './dom.js';
import { originGrantLink } from './team-origin-grants.js';
import { breadcrumbs, heading, pageTitle } from './views.js';
import { creationForm, emptyState, formField, originUrlInput } from './widgets.js';

/**
 * New project: name, slug, origin and team, created with POST /api/v1/projects. The API does the
 * validating; its Error body is shown next to the field it is about.
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {'name' | 'slug' | 'originUrl' | 'teamId'} FieldName */

/** @type {Record<string, FieldName>} */
const FIELD_BY_NAME = { name: 'name', slug: 'slug', originurl: 'originUrl', teamid: 'teamId' };

/**
 * Which field an API error is about: by its code, else by the field its message names
 * (`body.slug` from schema checks, `Slug "…"` / `originUrl …` from the project rules).
 * @param {{ code?: string, message?: string }} error
 * @returns {FieldName | null}
 */
export function fieldOfError(error) {
  if (error.code === 'slug_taken') return 'slug';
  if (error.code === 'origin_not_allowed') return 'originUrl';
  if (error.code === 'team_not_found') return 'teamId';
  if (error.code !== 'validation_failed') return null;
  const message = error.message ?? '';
  const named = /\bbody\.(\w+)/.exec(message)?.[1] ?? /^(slug|originUrl|name)\b/i.exec(message)?.[1];
  return named ? (FIELD_BY_NAME[named.toLowerCase()] ?? null) : null;
}

/**
 * A slug suggested from the name: lowercase ASCII letters, digits and inner hyphens.
 * @param {string} name
 */
function suggestSlug(name) {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

/** @param {ViewContext} context */
export function renderNewProject({ main, me, teams, navigate }) {
  pageTitle('New project');
  const trail = breadcrumbs('New project');
  if (teams.length === 0) {
    replaceChildren(
      main,
      trail,
      heading('New project'),
      emptyState(
        'You are not in a team yet',
        'Projects belong to a team. Ask a team owner to invite you, then come back here.',
      ),
    );
    return;
  }

  const address = h('code', {}, `your-slug.${location.host}`);
  const fields = {
    name: formField({
      id: 'project-name',
      label: 'Name',
      control: h('input', { name: 'name', type: 'text', maxlength: 100, autocomplete: 'off' }),
      hint: 'How the project is shown, for example “Petstore API”.',
    }),
    slug: formField({
      id: 'project-slug',
      label: 'Slug',
      control: h('input', {
        name: 'slug',
        type: 'text',
        maxlength: 63,
        autocomplete: 'off',
        autocapitalize: 'off',
        spellcheck: 'false',
      }),
      hint: h('span', {}, 'Lowercase letters, digits and hyphens. The API is published at ', address, '.'),
    }),
    originUrl: formField({
      id: 'project-origin',
      label: 'Origin URL',
      control: originUrlInput('https://api.example.com'),
      hint: 'Where your API runs: requests to the published address are sent there. A public address.',
    }),
    teamId: formField({
      id: 'project-team',
      label: 'Team',
      control: h(
        'select',
        { name: 'teamId' },
        teams.map((t) => h('option', { value: String(t.id) }, `${t.name} (${t.plan})`)),
      ),
    }),
  };
  const { name, slug, originUrl, teamId } = fields;
  // The slug follows the name until it is edited by hand.
  let slugEdited = false;
  const showAddress = () => {
    address.textContent = `${slug.control.value || 'your-slug'}.${location.host}`;
  };
  name.control.addEventListener('input', () => {
    if (!slugEdited) slug.control.value = suggestSlug(name.control.value);
    showAddress();
  });
  slug.control.addEventListener('input', () => {
    slugEdited = slug.control.value !== '';
    showAddress();
  });

  const { form, formError, submit } = creationForm(
    { id: 'new-project', title: 'Project details', submitLabel: 'Create project', onsubmit: create },
    name.element,
    slug.element,
    originUrl.element,
    teamId.element,
  );
  replaceChildren(
    main,
    trail,
    heading('New project'),
    h(
      'p',
      { class: 'lead' },
      'A project publishes one API: its reference and its requests at its own address, once you deploy an OpenAPI document.',
    ),
    form,
  );
  name.control.focus();

  /** @param {SubmitEvent} event */
  async function create(event) {
    event.preventDefault();
    for (const field of Object.values(fields)) field.clear();
    replaceChildren(formError);
    const missing = /** @type {[FieldName, string][]} */ ([
      ['name', 'Enter a name for the project.'],
      ['slug', 'Enter a slug: it becomes the project’s address.'],
      ['originUrl', 'Enter the URL where your API runs, for example https://api.example.com.'],
    ]).filter(([key]) => fields[key].control.value.trim() === '');
    if (missing.length > 0) {
      for (const [key, message] of missing) fields[key].showError({ message });
      fields[missing[0]?.[0] ?? 'name'].control.focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = 'Creating…';
    try {
      const project = await api('POST', '/api/v1/projects', {
        name: name.control.value.trim(),
        slug: slug.control.value.trim(),
        originUrl: originUrl.control.value.trim(),
        teamId: Number(teamId.control.value),
      });
      announce(`Project ${project.name} created.`);
      navigate(`/projects/${encodeURIComponent(project.slug)}`);
    } catch (error) {
      const apiError = /** @type {{ code?: string, message?: string }} */ (error);
      const key = fieldOfError(apiError);
      if (key) {
        fields[key].showError(apiError);
        const grant = originGrantLink(apiError, me, Number(teamId.control.value), originUrl.control.value);
        if (key === 'originUrl' && grant) originUrl.element.querySelector('.field-error')?.append(grant);
        fields[key].control.focus();
      } else {
        replaceChildren(formError, errorBanner(error, 'The project was not created'));
      }
      submit.disabled = false;
      submit.textContent = 'Create project';
    }
  }
}
