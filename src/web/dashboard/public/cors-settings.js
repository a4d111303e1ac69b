// @ts-check
import { ApiError, api, slugPath } from './api.js';
import { announce, errorBanner, h, replaceChildren } from './dom.js';
import { loadProject, pageTitle, projectHeader } from './views.js';
import { cardSection, formField, muted } from './widgets.js';

/**
 * Project settings → CORS: which browser apps on other origins may call the project's published
 * API. One form over GET/PUT /api/v1/projects/{slug}/cors (src/platform/api/routes/cors.ts); the
 * API validates, and each problem it names is shown under its field. Lists are one entry a line.
 */

/**
 * @typedef {{ enabled: boolean, allowedOrigins: string[], allowedMethods: string[],
 *   allowedHeaders: string[], exposeHeaders: string[], allowCredentials: boolean,
 *   maxAgeSeconds: number }} CorsPolicy
 */

/**
 * A checkbox with its label beside it (the dashboard's `.check` row) and an error slot, shaped
 * like formField's answer so the API's problems land under it too.
 * @param {string} id
 * @param {string} label
 * @param {string} name
 */
function checkField(id, label, name) {
  const control = h('input', { type: 'checkbox', id, name, 'aria-describedby': `${id}-error` });
  const errorSlot = h('div', { id: `${id}-error`, class: 'field-error' });
  return {
    element: h(
      'div',
      { class: 'field' },
      h('div', { class: 'check' }, control, h('label', { for: id }, label)),
      errorSlot,
    ),
    control,
    /** @param {{ message: string }} error */
    showError(error) {
      control.setAttribute('aria-invalid', 'true');
      replaceChildren(errorSlot, h('p', { role: 'alert' }, error.message));
    },
    clear() {
      control.removeAttribute('aria-invalid');
      replaceChildren(errorSlot);
    },
  };
}

/** @param {string[]} values */
const lines = (values) => values.join('\n');
/** @param {string} text */
const entries = (text) =>
  text
    .split(/[\n,]/)
    .map((v) => v.trim())
    .filter((v) => v !== '');

/**
 * @param {import('./types.js').ViewContext} context
 * @param {string} slug
 */
export async function renderCorsSettings({ main }, slug) {
  const project = await loadProject(main, slug);
  if (!project) return;
  pageTitle('CORS', project.name);
  /** @type {CorsPolicy} */
  let policy;
  try {
    policy = await api('GET', `${slugPath(slug)}/cors`);
  } catch (error) {
    replaceChildren(
      main,
      projectHeader(project, 'cors'),
      errorBanner(error, 'The CORS policy could not be read'),
    );
    return;
  }

  const enabledField = checkField(
    'cors-enabled',
    'Let browser apps on the origins below call the API',
    'enabled',
  );
  const credentialsField = checkField(
    'cors-credentials',
    'Allow credentials (cookies, HTTP authentication)',
    'allowCredentials',
  );
  const enabled = enabledField.control;
  const credentials = credentialsField.control;
  const textarea = (/** @type {string} */ name) =>
    h('textarea', { name, rows: 3, class: 'code-input', spellcheck: 'false', autocomplete: 'off' });
  const fields = {
    allowedOrigins: formField({
      id: 'cors-origins',
      label: 'Allowed origins',
      control: textarea('allowedOrigins'),
      hint: 'One a line, exactly as browsers send them: scheme, host and port only, as https://app.example.com (for a local dev server, http and its port). * allows every origin (then without credentials).',
    }),
    allowedMethods: formField({
      id: 'cors-methods',
      label: 'Allowed methods',
      control: textarea('allowedMethods'),
      hint: 'One a line, e.g. GET, POST, PUT, DELETE.',
    }),
    allowedHeaders: formField({
      id: 'cors-headers',
      label: 'Allowed request headers',
      control: textarea('allowedHeaders'),
      hint: 'Headers apps may send, e.g. authorization, content-type, idempotency-key, if-match.',
    }),
    exposeHeaders: formField({
      id: 'cors-expose',
      label: 'Exposed response headers',
      control: textarea('exposeHeaders'),
      hint: 'Headers apps may read beyond the basic ones, e.g. etag, link, location.',
    }),
    maxAgeSeconds: formField({
      id: 'cors-max-age',
      label: 'Preflight cache (seconds)',
      control: h('input', {
        type: 'number',
        name: 'maxAgeSeconds',
        min: 0,
        max: 86400,
        step: 1,
        inputmode: 'numeric',
      }),
      hint: 'How long browsers keep a preflight answer, 0 to 86400.',
    }),
  };
  const errorSlot = h('div', { id: 'cors-error' });
  const saveButton = h('button', { type: 'submit', class: 'button button-primary' }, 'Save CORS policy');

  function show() {
    enabled.checked = policy.enabled;
    credentials.checked = policy.allowCredentials;
    /** @type {HTMLTextAreaElement} */ (fields.allowedOrigins.control).value = lines(policy.allowedOrigins);
    /** @type {HTMLTextAreaElement} */ (fields.allowedMethods.control).value = lines(policy.allowedMethods);
    /** @type {HTMLTextAreaElement} */ (fields.allowedHeaders.control).value = lines(policy.allowedHeaders);
    /** @type {HTMLTextAreaElement} */ (fields.exposeHeaders.control).value = lines(policy.exposeHeaders);
    /** @type {HTMLInputElement} */ (fields.maxAgeSeconds.control).value = String(policy.maxAgeSeconds);
  }

  /** @param {SubmitEvent} event */
  async function submit(event) {
    event.preventDefault();
    for (const f of [...Object.values(fields), enabledField, credentialsField]) f.clear();
    replaceChildren(errorSlot);
    /** @type {CorsPolicy} */
    const wanted = {
      enabled: enabled.checked,
      allowedOrigins: entries(fields.allowedOrigins.control.value),
      allowedMethods: entries(fields.allowedMethods.control.value),
      allowedHeaders: entries(fields.allowedHeaders.control.value),
      exposeHeaders: entries(fields.exposeHeaders.control.value),
      allowCredentials: credentials.checked,
      maxAgeSeconds: Number(fields.maxAgeSeconds.control.value),
    };
    saveButton.disabled = true;
    saveButton.textContent = 'Saving…';
    try {
      policy = await api('PUT', `${slugPath(slug)}/cors`, wanted);
      show();
      announce(
        policy.enabled ? `Saved. CORS is on for ${policy.allowedOrigins.join(', ')}.` : 'Saved. CORS is off.',
      );
    } catch (error) {
      const body = /** @type {{ problems?: { field: string, message: string }[] } | null} */ (
        error instanceof ApiError ? error.body : null
      );
      const problems = Array.isArray(body?.problems) ? body.problems : [];
      if (problems.length === 0) {
        replaceChildren(errorSlot, errorBanner(error, 'Nothing was changed'));
        return;
      }
      /** @type {Map<string, string[]>} */
      const byField = new Map();
      for (const p of problems) byField.set(p.field, [...(byField.get(p.field) ?? []), p.message]);
      const target = (/** @type {string} */ name) =>
        name === 'enabled'
          ? enabledField
          : name === 'allowCredentials'
            ? credentialsField
            : fields[/** @type {keyof typeof fields} */ (name)];
      for (const [name, messages] of byField) target(name)?.showError({ message: messages.join(' ') });
      replaceChildren(
        errorSlot,
        h('p', { class: 'field-error', role: 'alert' }, 'Nothing was changed: fix the fields marked above.'),
      );
      const first = problems[0];
      if (first) target(first.field)?.control.focus();
    } finally {
      saveButton.disabled = false;
      saveButton.textContent = 'Save CORS policy';
    }
  }

  show();
  replaceChildren(
    main,
    projectHeader(project, 'cors'),
    cardSection(
      'cors',
      'CORS',
      muted(
        'Browsers stop a web app on another origin from calling your API unless the API allows it. With this on, the platform answers preflight requests under ',
        h('code', {}, '/api/'),
        ' itself and adds ',
        h('code', {}, 'Access-Control-Allow-Origin'),
        ' for the origins listed, in place of what your origin sends. Off, requests reach your origin unchanged. The document at ',
        h('code', {}, '/openapi.json'),
        ' may always be loaded from anywhere.',
      ),
      h(
        'form',
        {
          class: 'settings-form cors-form',
          'aria-labelledby': 'cors-title',
          novalidate: true,
          onsubmit: submit,
        },
        enabledField.element,
        fields.allowedOrigins.element,
        fields.allowedMethods.element,
        fields.allowedHeaders.element,
        fields.exposeHeaders.element,
        credentialsField.element,
        fields.maxAgeSeconds.element,
        errorSlot,
        h('div', { class: 'actions' }, saveButton),
      ),
      muted(
        'The same policy is the ',
        h('code', {}, 'cors:'),
        ' section of the file ',
        h('code', {}, `kennel domains export ${project.slug}`),
        ' prints.',
      ),
    ),
  );
}
