// @ts-check
import { api, slugPath } from './api.js';
import { breakingOf, changeList, changeSummary, confirmBreaking } from './deploy-changes.js';
import { compareSection } from './deploy-compare.js';
import { showDocument } from './deploy-documents.js';
import { historyTable, openPreviewLink } from './deploy-history.js';
import { announce, errorBanner, h, replaceChildren, time } from './dom.js';
import { addressOf, loadProject, pageTitle, projectHeader } from './views.js';
import {
  cardSection,
  confirmAction,
  emptyState,
  formField,
  muted,
  originUrlInput,
  titledSection,
} from './widgets.js';

/**
 * A project's Deploys page: upload an OpenAPI document (file, drag-and-drop or paste), deploy it
 * with POST /api/v1/projects/{slug}/deploys (or as a preview), see what happened — its changes
 * against the live deploy; a failed deploy lists the validator's problems and leaves the live
 * deploy as it was; breaking changes are published only once confirmed — then the history (each
 * deploy's changes, its document, Promote), and any two deploys compared side by side.
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {import('./types.js').Deploy} Deploy */
/** @typedef {import('./types.js').Project} Project */
/** @typedef {import('./types.js').Change} Change */

/**
 * A deploy's problems read `<JSON pointer> (line L, column C): <message>` (src/platform/projects/
 * document-problems.ts); the pointer is shown as the path through the document (`paths › /pets ›
 * get`) beside its line and column. Messages about the whole text are shown as they are.
 * @param {string} problem
 * @returns {{ path: string | null, position: string | null, message: string }}
 */
export function splitProblem(problem) {
  const match = /^(\/.*?)(?: \((line \d+, column \d+)\))?: (.*)$/s.exec(problem);
  if (!match) return { path: null, position: null, message: problem };
  const pointer = match[1] ?? '/';
  const path =
    pointer === '/'
      ? 'the document'
      : pointer
          .slice(1)
          .split('/')
          .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
          .join(' › ');
  return { path, position: match[2] ?? null, message: match[3] ?? '' };
}

/** @param {string[]} problems */
export function problemList(problems) {
  return h(
    'ul',
    { class: 'problem-list' },
    problems.map((problem) => {
      const { path, position, message } = splitProblem(problem);
      return h(
        'li',
        {},
        path ? h('code', { class: 'problem-path' }, path) : null,
        position ? h('span', { class: 'problem-position' }, ` ${position} `) : null,
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
  /** @type {Deploy[]} */
  let deploys = [];

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
  const previewBox = h('input', { type: 'checkbox', id: 'deploy-preview', name: 'preview' });
  const preview = h(
    'div',
    { class: 'field' },
    h('div', { class: 'check' }, previewBox, h('label', { for: 'deploy-preview' }, 'Deploy as a preview')),
    h(
      'p',
      { class: 'hint', id: 'deploy-preview-hint' },
      'A preview gets an address of its own, visible to the team and to share links; the live site does not change until you promote it.',
    ),
  );
  previewBox.setAttribute('aria-describedby', 'deploy-preview-hint');
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Deploy');
  const resultSlot = h('div', { class: 'deploy-result' });
  const historySlot = h('div', {}, h('p', { class: 'loading' }, 'Loading the history…'));
  const compareSlot = h('div', {});
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
    preview,
    h('div', { class: 'form-actions' }, submit),
  );

  replaceChildren(
    main,
    projectHeader(project, 'deploys'),
    cardSection(
      'new-deploy',
      'Deploy a document',
      muted(
        'A valid document goes live at once at ',
        h('a', { href: addressOf(project.defaultHost), class: 'break' }, project.defaultHost),
        ', with its changes listed; one that would break callers asks you first. An invalid one is kept as a failed deploy with the problems found, and the live deploy stays as it is.',
      ),
      liveSlot,
      form,
      resultSlot,
    ),
    titledSection(
      'section',
      'history',
      'Deploy history',
      muted(
        'Each deploy’s changes are against the deploy that was live when it was made. The site lists what went live at ',
        h(
          'a',
          { href: `${addressOf(project.defaultHost)}/changelog`, class: 'break' },
          `${project.defaultHost}/changelog`,
        ),
        '.',
      ),
      historySlot,
    ),
    titledSection('section', 'compare', 'Compare deploys', compareSlot),
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

  /**
   * Sends the deploy; a 409 breaking_changes asks for a confirmation listing what breaks, then
   * sends it again with allowBreaking.
   * @param {SubmitEvent} event
   */
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
    const asPreview = previewBox.checked;
    /** @param {boolean} allowBreaking */
    const send = async (allowBreaking) => {
      /** @type {Deploy} */
      const result = await api('POST', `${slugPath(slug)}/deploys`, {
        document: text,
        ...(originUrl ? { originUrl } : {}),
        ...(asPreview ? { preview: true } : {}),
        ...(allowBreaking ? { allowBreaking: true } : {}),
      });
      await deployed(result);
    };
    submit.disabled = true;
    submit.textContent = 'Deploying…';
    try {
      await send(false);
    } catch (error) {
      const apiError = /** @type {import('./api.js').ApiError} */ (error);
      if (apiError.code === 'breaking_changes') {
        /** @type {Change[]} */
        const changes = /** @type {{ changes?: Change[] } | null} */ (apiError.body)?.changes ?? [];
        const count = breakingOf(changes).length;
        const ran = await confirmBreaking({
          title: count === 1 ? 'This deploy breaks callers' : `This deploy has ${count} breaking changes`,
          intro: `Callers of the live API may stop working once it is live. Nothing is published unless you confirm:`,
          changes,
          confirm: 'Deploy anyway',
          busy: 'Deploying…',
          action: () => send(true),
          trigger: submit,
        });
        if (!ran) {
          replaceChildren(
            resultSlot,
            h(
              'div',
              { class: 'banner banner-warning', role: 'status', 'data-testid': 'deploy-outcome' },
              h('p', { class: 'banner-title' }, 'Not deployed: it has breaking changes'),
              h('p', {}, 'The live deploy stays as it is. Fix the document, or deploy again and confirm.'),
              changeList(breakingOf(changes)),
            ),
          );
        }
      } else if (apiError.code === 'origin_not_allowed' || /\boriginUrl\b/.test(apiError.message ?? '')) {
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

  /** @param {Deploy} result */
  async function deployed(result) {
    project = await api('GET', slugPath(slug));
    // The history first: what the outcome says is then already in the table below it.
    await showHistory();
    replaceChildren(resultSlot, outcome(result));
    announce(
      result.status !== 'succeeded'
        ? `Deploy ${result.number} failed with ${result.problems.length} problems; nothing changed.`
        : result.preview
          ? `Preview ${result.number} is ready.`
          : `Deploy ${result.number} is live.`,
    );
  }

  /** @param {Deploy} deploy */
  function outcome(deploy) {
    if (deploy.status === 'succeeded') {
      const changes = h(
        'details',
        {
          class: 'change-details',
          open: deploy.changes.length > 0 && deploy.changes.length <= 10 ? true : null,
        },
        h('summary', {}, changeSummary(deploy.changes), ' against the live deploy'),
        changeList(deploy.changes, 'Nothing changed for callers.'),
      );
      if (deploy.preview) {
        return h(
          'div',
          { class: 'banner banner-success', role: 'status', 'data-testid': 'deploy-outcome' },
          h('p', { class: 'banner-title' }, `Preview #${deploy.number} is ready`),
          h('p', {}, 'The live site has not changed. ', openPreviewLink(slug, deploy)),
          changes,
        );
      }
      return h(
        'div',
        { class: 'banner banner-success', role: 'status', 'data-testid': 'deploy-outcome' },
        h('p', { class: 'banner-title' }, `Deploy #${deploy.number} is live`),
        h(
          'p',
          {},
          'Published at ',
          h('a', { href: addressOf(project?.defaultHost ?? ''), class: 'break' }, project?.defaultHost),
          `, sending requests to `,
          h('code', { class: 'break' }, deploy.originUrl),
          '.',
        ),
        changes,
      );
    }
    const live = deploys.find((d) => d.active);
    return h(
      'div',
      { class: 'banner banner-error', role: 'alert', 'data-testid': 'deploy-outcome' },
      h('p', { class: 'banner-title' }, `Deploy #${deploy.number} failed: the document is not valid`),
      h(
        'p',
        {},
        live ? `Deploy #${live.number} stays live. ` : 'Nothing is published yet. ',
        deploy.problems.length === 1
          ? 'Fix this problem and deploy again:'
          : `Fix these ${deploy.problems.length} problems and deploy again:`,
      ),
      problemList(deploy.problems),
    );
  }

  /**
   * Makes an earlier deploy live again, after a confirmation that says what changes against the
   * live deploy (and lists what breaks, when something does).
   * @param {Deploy} target
   * @param {HTMLElement} trigger
   */
  async function promote(target, trigger) {
    const live = deploys.find((d) => d.active);
    /** @type {Change[]} */
    let changes = [];
    if (live) {
      try {
        /** @type {{ changes: Change[] }} */
        const comparison = await api(
          'GET',
          `${slugPath(slug)}/deploys/${target.id}/changes?against=${live.id}`,
        );
        changes = comparison.changes;
      } catch (error) {
        replaceChildren(
          resultSlot,
          errorBanner(error, `Deploy #${target.number} could not be compared with the live one`),
        );
        return;
      }
    }
    /** @param {boolean} allowBreaking */
    const run = async (allowBreaking) => {
      /** @type {{ deploy: Deploy }} */
      const promoted = await api(
        'POST',
        `${slugPath(slug)}/deploys/${target.id}/promote`,
        allowBreaking ? { allowBreaking: true } : {},
      );
      project = await api('GET', slugPath(slug));
      await showHistory();
      replaceChildren(
        resultSlot,
        h(
          'div',
          { class: 'banner banner-success', role: 'status', 'data-testid': 'deploy-outcome' },
          h('p', { class: 'banner-title' }, `Deploy #${promoted.deploy.number} is live again`),
          h('p', {}, changeSummary(changes), live ? ` against deploy #${live.number}.` : '.'),
        ),
      );
      announce(`Deploy ${target.number} is live.`);
    };
    const from = live ? `deploy #${live.number}` : 'nothing';
    if (breakingOf(changes).length > 0) {
      await confirmBreaking({
        title: `Promote deploy #${target.number}? It breaks callers`,
        intro: `Making deploy #${target.number} live in place of ${from} breaks callers of the live API:`,
        changes,
        confirm: 'Promote anyway',
        busy: 'Promoting…',
        action: () => run(true),
        trigger,
      });
      return;
    }
    await confirmAction({
      title: `Make deploy #${target.number} live?`,
      body: `It replaces ${from} on the site and in its changelog: ${changeSummary(changes).toLowerCase()}.`,
      confirm: 'Promote',
      busy: 'Promoting…',
      danger: false,
      action: () => run(false),
      trigger,
    });
  }

  async function showHistory() {
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
        ? h('span', {}, `Live now: deploy #${live.number}, from `, time(live.createdAt), '.')
        : 'Nothing is live yet.',
    );
    if (deploys.length === 0) {
      replaceChildren(
        historySlot,
        emptyState('No deploys yet', 'Deploy a document above to publish the API.'),
      );
      replaceChildren(compareSlot, muted('Two deploys with a document are needed to compare them.'));
      return;
    }
    replaceChildren(
      historySlot,
      historyTable({
        slug,
        deploys,
        problemList,
        onView: (d, trigger) => void showDocument(slug, d, trigger),
        onPromote: (d, trigger) => void promote(d, trigger),
      }),
    );
    replaceChildren(compareSlot, compareSection(slug, deploys));
  }
}
