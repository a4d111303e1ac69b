// @ts-check
import { api, slugPath } from './api.js';
import { announce, errorBanner, h, replaceChildren, time } from './dom.js';
import { addressOf, loadProject, pageTitle, projectHeader } from './views.js';
import { cardSection, cell, dataTable, emptyState, formField, originUrlInput } from './widgets.js';

/**
 * A project's Deploys page: upload an OpenAPI document (file, drag-and-drop or paste), deploy it
 * with POST /api/v1/projects/{slug}/deploys, see what happened — a failed deploy lists the
 * validator's problems and leaves the live deploy as it was — and the history, the live one marked.
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {import('./types.js').Deploy} Deploy */
/** @typedef {import('./types.js').Project} Project */

/**
 * The validator's messages read `<JSON pointer>: <message>` (src/platform/projects/deploys.ts);
 * the pointer is shown as the path through the document (`paths › /pets › get`). Messages about
 * the whole text (not YAML, no `openapi` field) are shown as they are.
 * @param {string} problem
 * @returns {{ path: string | null, message: string }}
 */
export function splitProblem(problem) {
  const match = /^(\/.*?): (.*)$/s.exec(problem);
  if (!match) return { path: null, message: problem };
  const pointer = match[1] ?? '/';
  const path =
    pointer === '/'
      ? 'the document'
      : pointer
          .slice(1)
          .split('/')
          .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
          .join(' › ');
  return { path, message: match[2] ?? '' };
}

/** @param {string[]} problems */
function problemList(problems) {
  return h(
    'ul',
    { class: 'problem-list' },
    problems.map((problem) => {
      const { path, message } = splitProblem(problem);
      return h(
        'li',
        {},
        path ? h('code', { class: 'problem-path' }, path) : null,
        h('span', { class: 'problem-message' }, message),
      );
    }),
  );
}

/** @param {number} bytes */
const size = (bytes) =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
      ? `${Math.round(bytes / 1024)} KB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * @param {ViewContext} context
 * @param {string} slug
 */
export async function renderDeploys({ main }, slug) {
  /** @type {Project | null} */
  let project = await loadProject(main, slug);
  if (!project) return;
  pageTitle('Deploys', project.name);

  const fileInput = h('input', {
    type: 'file',
    class: 'file-input',
    accept: '.json,.yaml,.yml,application/json,application/yaml,text/yaml',
  });
  const fileNote = h('p', { class: 'hint', id: 'deploy-file-note', role: 'status' });
  const document_ = formField({
    id: 'deploy-document',
    label: 'OpenAPI document',
    control: h('textarea', {
      name: 'document',
      rows: 12,
      spellcheck: 'false',
      autocapitalize: 'off',
      class: 'code-input',
      placeholder: 'openapi: 3.1.0\ninfo:\n  title: …',
    }),
    hint: 'OpenAPI 3.0 or 3.1, as JSON or YAML: choose a file, drop one on this box, or paste the text.',
  });
  const origin = formField({
    id: 'deploy-origin',
    label: 'New origin URL (optional)',
    control: originUrlInput(project.originUrl),
    hint: 'Leave empty to keep sending requests to the current origin.',
  });
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Deploy');
  const resultSlot = h('div', { class: 'deploy-result' });
  const historySlot = h('div', {}, h('p', { class: 'loading' }, 'Loading the history…'));
  const liveSlot = h('p', { class: 'muted' });

  const dropzone = h(
    'div',
    { class: 'dropzone' },
    h(
      'label',
      { class: 'dropzone-label' },
      h('span', { class: 'button button-small' }, 'Choose a file…'),
      h('span', { class: 'visually-hidden' }, 'OpenAPI document file, JSON or YAML'),
      fileInput,
    ),
    h('span', { class: 'hint' }, 'or drop a .json, .yaml or .yml file here'),
    fileNote,
  );
  dropzone.addEventListener('dragover', (event) => {
    event.preventDefault();
    dropzone.classList.add('dropzone-over');
  });
  dropzone.addEventListener('dragleave', () => dropzone.classList.remove('dropzone-over'));
  dropzone.addEventListener('drop', (event) => {
    event.preventDefault();
    dropzone.classList.remove('dropzone-over');
    const file = event.dataTransfer?.files[0];
    if (file) void load(file);
  });
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) void load(file);
  });

  const form = h(
    'form',
    { class: 'deploy-form', novalidate: true, 'aria-labelledby': 'new-deploy-title', onsubmit: deploy },
    dropzone,
    document_.element,
    origin.element,
    h('div', { class: 'form-actions' }, submit),
  );

  replaceChildren(
    main,
    projectHeader(project, 'deploys'),
    cardSection(
      'new-deploy',
      'Deploy a document',
      h(
        'p',
        { class: 'muted' },
        'A valid document goes live at once at ',
        h('a', { href: addressOf(project.defaultHost), class: 'break' }, project.defaultHost),
        '. An invalid one is kept as a failed deploy with the problems found, and the live deploy stays as it is.',
      ),
      liveSlot,
      form,
      resultSlot,
    ),
    h(
      'section',
      { class: 'section', 'aria-labelledby': 'history-title' },
      h('h2', { id: 'history-title' }, 'Deploy history'),
      historySlot,
    ),
  );
  await showHistory();

  /** @param {File} file */
  async function load(file) {
    document_.clear();
    try {
      document_.control.value = await file.text();
      replaceChildren(fileNote, 'Loaded ', h('strong', {}, file.name), ` (${size(file.size)}).`);
      announce(`${file.name} loaded. Press Deploy to publish it.`);
    } catch (error) {
      document_.showError({ message: `${file.name} could not be read: ${String(error)}` });
    }
  }

  /** @param {SubmitEvent} event */
  async function deploy(event) {
    event.preventDefault();
    document_.clear();
    origin.clear();
    replaceChildren(resultSlot);
    const text = document_.control.value;
    if (text.trim() === '') {
      document_.showError({ message: 'Choose a file, drop one here or paste the document first.' });
      document_.control.focus();
      return;
    }
    const originUrl = origin.control.value.trim();
    submit.disabled = true;
    submit.textContent = 'Deploying…';
    try {
      /** @type {Deploy} */
      const result = await api('POST', `${slugPath(slug)}/deploys`, {
        document: text,
        ...(originUrl ? { originUrl } : {}),
      });
      project = await api('GET', slugPath(slug));
      replaceChildren(resultSlot, outcome(result));
      announce(
        result.status === 'succeeded'
          ? `Deploy ${result.id} is live.`
          : `Deploy ${result.id} failed with ${result.problems.length} problems; nothing changed.`,
      );
      await showHistory();
    } catch (error) {
      const apiError = /** @type {{ code?: string, message?: string }} */ (error);
      if (apiError.code === 'origin_not_allowed' || /\boriginUrl\b/.test(apiError.message ?? '')) {
        origin.showError(apiError);
        origin.control.focus();
      } else {
        replaceChildren(resultSlot, errorBanner(error, 'Nothing was deployed'));
      }
    } finally {
      submit.disabled = false;
      submit.textContent = 'Deploy';
    }
  }

  /** @param {Deploy} deploy */
  function outcome(deploy) {
    if (deploy.status === 'succeeded') {
      return h(
        'div',
        { class: 'banner banner-success', role: 'status', 'data-testid': 'deploy-outcome' },
        h('p', { class: 'banner-title' }, `Deploy #${deploy.id} is live`),
        h(
          'p',
          {},
          'Published at ',
          h('a', { href: addressOf(project?.defaultHost ?? ''), class: 'break' }, project?.defaultHost),
          `, sending requests to `,
          h('code', { class: 'break' }, deploy.originUrl),
          '.',
        ),
      );
    }
    const live = project?.activeDeployId;
    return h(
      'div',
      { class: 'banner banner-error', role: 'alert', 'data-testid': 'deploy-outcome' },
      h('p', { class: 'banner-title' }, `Deploy #${deploy.id} failed: the document is not valid`),
      h(
        'p',
        {},
        live ? `Deploy #${live} stays live. ` : 'Nothing is published yet. ',
        deploy.problems.length === 1
          ? 'Fix this problem and deploy again:'
          : `Fix these ${deploy.problems.length} problems and deploy again:`,
      ),
      problemList(deploy.problems),
    );
  }

  async function showHistory() {
    /** @type {Deploy[]} */
    let deploys;
    try {
      deploys = await api('GET', `${slugPath(slug)}/deploys`);
    } catch (error) {
      replaceChildren(historySlot, errorBanner(error, 'The deploy history could not be loaded'));
      return;
    }
    const live = deploys.find((d) => d.active);
    replaceChildren(
      liveSlot,
      live
        ? h('span', {}, `Live now: deploy #${live.id}, from `, time(live.createdAt), '.')
        : 'Nothing is live yet.',
    );
    if (deploys.length === 0) {
      replaceChildren(
        historySlot,
        emptyState('No deploys yet', 'Deploy a document above to publish the API.'),
      );
      return;
    }
    replaceChildren(
      historySlot,
      dataTable({
        caption: 'Deploy history, newest first',
        columns: ['Deploy', 'Status', 'Deployed', 'Format', 'Origin'],
        className: 'deploy-table',
        rows: deploys.map((d) =>
          h(
            'tr',
            { 'data-deploy': String(d.id), 'data-live': d.active ? 'true' : null },
            cell(
              'Deploy',
              h(
                'div',
                {},
                h('span', { class: 'deploy-id' }, `#${d.id}`),
                d.active ? [' ', h('span', { class: 'badge badge-live' }, 'Live')] : null,
              ),
            ),
            cell(
              'Status',
              h(
                'div',
                {},
                d.status === 'succeeded'
                  ? h('span', { class: 'status-ok' }, d.active ? 'Succeeded, serving' : 'Succeeded')
                  : h('span', { class: 'status-failed' }, 'Failed: not published'),
                d.problems.length > 0
                  ? h(
                      'details',
                      { class: 'problems-details' },
                      h(
                        'summary',
                        {},
                        d.problems.length === 1 ? '1 problem' : `${d.problems.length} problems`,
                      ),
                      problemList(d.problems),
                    )
                  : null,
              ),
            ),
            cell('Deployed', time(d.createdAt)),
            cell('Format', d.sourceFormat.toUpperCase()),
            cell('Origin', h('code', { class: 'break' }, d.originUrl)),
          ),
        ),
      }),
    );
  }
}
