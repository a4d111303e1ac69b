// @ts-check
import { api, slugPath } from './api.js';
import { errorBanner, h, replaceChildren } from './dom.js';
import { originGrantLink } from './team-origin-grants.js';
import { loadProject, pageTitle, projectHeader } from './views.js';
import { cardSection, formField, originUrlInput } from './widgets.js';

/**
 * Project settings → General: rename the project, move it to another origin, and delete it.
 * PATCH /api/v1/projects/{slug} takes the name or the origin (the API checks an origin as at
 * creation; its message shows under the field); the danger zone lists what goes with the project,
 * counted by GET /api/v1/projects/{slug}/deletion, and deletes it once its slug is typed. Only the
 * team's owners and platform admins may delete: anyone else is told whom to ask instead of being
 * offered a form that would be refused.
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {import('./types.js').Project} Project */
/** @typedef {{ slug: string, domains: number, certificates: number, deploys: number }} ProjectDeletion */

/**
 * @param {number} count
 * @param {string} one
 * @param {string} many
 */
const counted = (count, one, many) => `${count} ${count === 1 ? one : many}`;

/**
 * What goes with a project, in words: "2 custom domains, 1 certificate and 3 deploys".
 * @param {ProjectDeletion} d
 */
export function holdingsText(d) {
  return `${counted(d.domains, 'custom domain', 'custom domains')}, ${counted(d.certificates, 'certificate', 'certificates')} and ${counted(d.deploys, 'deploy', 'deploys')}`;
}

/**
 * @param {ViewContext} context
 * @param {string} slug
 */
export async function renderProjectSettings({ main, me, teams, navigate, setFlash }, slug) {
  const loaded = await loadProject(main, slug);
  if (!loaded) return;
  /** @type {Project} */
  let project = loaded;
  pageTitle('Settings', project.name);
  const team = teams.find((t) => t.id === project.teamId);
  const mayDelete = team?.role === 'owner' || me?.isAdmin === true;

  const nameField = formField({
    id: 'project-name',
    label: 'Name',
    control: h('input', {
      name: 'name',
      type: 'text',
      required: true,
      maxlength: 100,
      autocomplete: 'off',
      value: project.name,
    }),
    hint: [
      'Shown in the dashboard. The slug, ',
      h('code', {}, project.slug),
      ', does not change: it is the published address, ',
      h('code', { class: 'break' }, project.defaultHost),
      '.',
    ],
  });
  const originField = formField({
    id: 'project-origin',
    label: 'Origin',
    control: originUrlInput('https://api.example.com'),
    hint: 'Where the API runs: an http or https address. A private address needs a platform admin’s grant to the team. The platform uses the new origin from the next request; past deploys keep the origin they were made with.',
  });
  /** @type {HTMLInputElement} */ (originField.control).value = project.originUrl;

  /**
   * A form that sends one field's change and shows the API's refusal under that field.
   * @param {{ id: string, field: ReturnType<typeof formField>, label: string, body: () => Record<string, string>,
   *   saved: (project: Project) => string }} options
   */
  function changeForm({ id, field, label, body, saved }) {
    const button = h('button', { type: 'submit', class: 'button button-primary' }, label);
    const done = h('p', { class: 'hint', role: 'status' });
    return h(
      'form',
      {
        id,
        class: 'settings-form',
        novalidate: true,
        async onsubmit(/** @type {SubmitEvent} */ event) {
          event.preventDefault();
          field.clear();
          replaceChildren(done);
          button.disabled = true;
          try {
            project = await api('PATCH', slugPath(slug), body());
            // The form's own status line is a live region: screen readers hear it there.
            replaceChildren(done, saved(project));
          } catch (error) {
            field.showError(/** @type {{ message?: string, code?: string }} */ (error));
            const grant = originGrantLink(
              /** @type {{ code?: string }} */ (error),
              me,
              project.teamId,
              field.control.value.trim(),
            );
            if (grant) field.element.querySelector('.field-error')?.append(grant);
            field.control.focus();
          } finally {
            button.disabled = false;
          }
        },
      },
      field.element,
      h('div', { class: 'actions' }, button),
      done,
    );
  }

  const nameForm = changeForm({
    id: 'rename-form',
    field: nameField,
    label: 'Save name',
    body: () => ({ name: nameField.control.value }),
    saved(changed) {
      nameField.control.value = changed.name;
      // The page's heading and trail follow the new name.
      const heading = main.querySelector('h1');
      if (heading) heading.textContent = changed.name;
      const here = main.querySelector('.breadcrumbs [aria-current="page"]');
      if (here) here.textContent = changed.name;
      pageTitle('Settings', changed.name);
      return `Saved. The project is now called ${changed.name}.`;
    },
  });
  const originForm = changeForm({
    id: 'origin-form',
    field: originField,
    label: 'Save origin',
    body: () => ({ originUrl: originField.control.value.trim() }),
    saved(changed) {
      originField.control.value = changed.originUrl;
      return `Saved. Requests to the API now go to ${changed.originUrl}.`;
    },
  });

  replaceChildren(
    main,
    projectHeader(project, 'settings'),
    cardSection('general', 'Name and origin', nameForm, originForm),
    dangerZone(),
  );

  function dangerZone() {
    const section = cardSection('danger', 'Delete this project');
    section.classList.add('danger-zone');
    if (!mayDelete) {
      section.append(
        h(
          'p',
          { 'data-testid': 'delete-owners-only' },
          `Only the owners of team ${team?.name ?? project.teamId} (and platform admins) can delete this project. Ask one of them if it should go.`,
        ),
      );
      return section;
    }
    const what = h(
      'div',
      { class: 'slot', 'data-testid': 'deletion-holdings' },
      h('p', { class: 'loading' }, 'Counting what goes with it…'),
    );
    const confirmInput = h('input', {
      name: 'confirm',
      type: 'text',
      autocomplete: 'off',
      autocapitalize: 'off',
      spellcheck: 'false',
      required: true,
    });
    const confirmField = formField({
      id: 'delete-confirm',
      label: `Type the project’s slug, ${project.slug}, to confirm`,
      control: confirmInput,
    });
    const deleteButton = h(
      'button',
      { type: 'submit', class: 'button button-danger', disabled: true },
      'Delete project',
    );
    confirmInput.addEventListener('input', () => {
      deleteButton.disabled = confirmInput.value.trim() !== project.slug;
    });
    const errorSlot = h('div', { class: 'slot' });
    section.append(
      what,
      h(
        'form',
        {
          class: 'settings-form',
          novalidate: true,
          async onsubmit(/** @type {SubmitEvent} */ event) {
            event.preventDefault();
            replaceChildren(errorSlot);
            if (confirmInput.value.trim() !== project.slug) {
              confirmField.showError({ message: `Type ${project.slug} exactly to delete the project.` });
              return;
            }
            deleteButton.disabled = true;
            deleteButton.textContent = 'Deleting…';
            try {
              /** @type {ProjectDeletion} */
              const removed = await api('DELETE', slugPath(slug));
              setFlash({
                message: `Project ${project.name} (${removed.slug}) was deleted, with ${holdingsText(removed)}.`,
              });
              navigate('/');
            } catch (error) {
              replaceChildren(errorSlot, errorBanner(error, 'The project was not deleted'));
              deleteButton.disabled = false;
              deleteButton.textContent = 'Delete project';
            }
          },
        },
        confirmField.element,
        errorSlot,
        h('div', { class: 'actions' }, deleteButton),
      ),
    );
    api('GET', `${slugPath(slug)}/deletion`)
      .then((/** @type {ProjectDeletion} */ d) =>
        replaceChildren(
          what,
          h(
            'p',
            {},
            `Deleting ${project.name} removes, with no undo: `,
            h('strong', {}, holdingsText(d)),
            ', with its changelog, CORS policy and traffic. Its addresses stop answering at once, and the slug ',
            h('code', {}, project.slug),
            ' becomes free for anyone.',
          ),
        ),
      )
      .catch((error) =>
        replaceChildren(what, errorBanner(error, 'What goes with the project could not be counted')),
      );
    return section;
  }
}
