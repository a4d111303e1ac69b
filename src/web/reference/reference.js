// The published API reference: boots Swagger UI (served from this site, see reference-assets.ts)
// with the active deploy's OpenAPI document, embedded in the page by the edge, and a plugin that
// adds what Swagger UI does not do by itself:
// - a console button named "Test it"; none on operations marked `x-hideTryItPanel: true`;
// - the sunset date (`x-sunset`) next to a deprecated operation;
// - a note when a live answer carries `Deprecation` or `Sunset` headers;
// - the header's Authorize button, which opens Swagger UI's authorization dialog (its own button
//   sits below the document's description, screens down);
// - a scrolling box around every table in rendered Markdown, so a wide table scrolls by itself on
//   a phone instead of squeezing its columns or widening the page;
// - the description folded under "About this API", so the first operation is in the first screen;
// - the operation paths without Swagger UI's link inside the summary button (a control nested in
//   a control); the sidebar (built by the edge) carries each operation's deep link instead;
// - the sidebar's search and deep links, and the opt-in "Remember my key on this device".
// Plain browser JavaScript, no build step; the page's CSP allows only scripts from this site.
(() => {
  const source = document.getElementById('kennel-openapi');
  const root = document.getElementById('swagger-ui');
  if (!source || !root || typeof window.SwaggerUIBundle !== 'function') return;

  const spec = JSON.parse(source.textContent || '{}');
  // "Try it out" goes through the edge to the project's API, never to a server the document names.
  spec.servers = [{ url: `${window.location.origin}/api`, description: 'this site' }];
  for (const item of Object.values(spec.paths || {})) {
    if (!item || typeof item !== 'object') continue;
    delete item.servers;
    for (const operation of Object.values(item)) {
      if (operation && typeof operation === 'object') delete operation.servers;
    }
  }

  const SUNSET_HEADERS = ['deprecation', 'sunset'];
  let parsedSpec = false;
  /** What runs once Swagger UI has rendered the document. */
  const whenReady = [];

  function KennelReferencePlugin(system) {
    return {
      statePlugins: {
        spec: {
          wrapActions: {
            // Swagger UI hands the document it was given back to itself as text and parses that
            // with its YAML parser: a second of work on a large document (GitHub's, 13 MB) for the
            // object already here. The first parse takes the object; any later (none today) parses.
            parseToJson: (original, system) => (text) => {
              if (parsedSpec) return original(text);
              parsedSpec = true;
              system.errActions.clear({ source: 'parser' });
              return system.specActions.updateJsonSpec(spec);
            },
          },
          wrapSelectors: {
            allowTryItOutFor: (original, system) => (_state, path, method) =>
              original(path, method) &&
              system.specSelectors.specJson().getIn(['paths', path, method, 'x-hideTryItPanel']) !== true,
          },
        },
      },
      components: {
        // Swagger UI's own button, labelled as Kennel's console is named: "Test it".
        TryItOutButton: (props) => {
          const h = system.React.createElement;
          const { onTryoutClick, onCancelClick, onResetClick, enabled, hasUserEditedBody, isOAS3 } = props;
          const showReset = isOAS3 && hasUserEditedBody;
          return h(
            'div',
            { className: showReset ? 'try-out btn-group' : 'try-out' },
            enabled
              ? h(
                  'button',
                  { type: 'button', className: 'btn try-out__btn cancel', onClick: onCancelClick },
                  'Cancel',
                )
              : h(
                  'button',
                  { type: 'button', className: 'btn try-out__btn', onClick: onTryoutClick },
                  'Test it',
                ),
            showReset &&
              h(
                'button',
                { type: 'button', className: 'btn try-out__btn reset', onClick: onResetClick },
                'Reset',
              ),
          );
        },
      },
      wrapComponents: {
        InfoContainer: (Original, system) => (props) => {
          const h = system.React.createElement;
          // A named region: the description is content too, not outside every landmark.
          return h(
            'section',
            { 'aria-label': 'About this API' },
            h(
              'details',
              { className: 'kennel-about' },
              h('summary', null, 'About this API'),
              h(Original, props),
            ),
          );
        },
        OperationSummaryPath: (_Original, system) => (props) => {
          const h = system.React.createElement;
          const operation = props.operationProps;
          const deprecated = operation.get('deprecated');
          const path = operation.get('path');
          const sunset = system.specSelectors
            .specJson()
            .getIn(['paths', path, operation.get('method'), 'x-sunset']);
          // Swagger UI's own puts a link in the summary's button; the text alone, as it shows it.
          const plain = h(
            'span',
            {
              className: deprecated ? 'opblock-summary-path__deprecated' : 'opblock-summary-path',
              'data-path': path,
            },
            h('span', null, path),
          );
          if (!deprecated) return plain;
          return h(
            system.React.Fragment,
            null,
            plain,
            h(
              'span',
              { className: 'kennel-deprecated' },
              sunset ? `Deprecated · sunset ${sunset}` : 'Deprecated',
            ),
          );
        },
        liveResponse: (Original, system) => (props) => {
          const h = system.React.createElement;
          const headers = props.response?.get('headers')?.toJS?.() || {};
          const found = Object.keys(headers)
            .filter((name) => SUNSET_HEADERS.includes(name.toLowerCase()))
            // Swagger UI splits header values at commas; HTTP dates have one.
            .map((name) => [name, [].concat(headers[name]).join(', ')]);
          if (found.length === 0) return h(Original, props);
          return h(
            'div',
            null,
            h(
              'div',
              { className: 'kennel-sunset-note', role: 'note' },
              h('strong', null, 'This operation is deprecated. '),
              'The answer carries ',
              ...found.flatMap(([name, value], i) => [
                i > 0 ? ' and ' : '',
                h('code', { key: name }, `${name}: ${value}`),
              ]),
              '. Move to its successor before the sunset date.',
            ),
            h(Original, props),
          );
        },
      },
    };
  }

  /**
   * Markdown tables (the description's state and error tables) go in a focusable, labelled
   * region that scrolls sideways: keyboard users can scroll it too. Swagger UI writes Markdown as
   * inner HTML that React leaves alone until the text changes, so wrapping in place is safe; a
   * re-render brings a bare table back and this wraps it again.
   */
  let tableCount = 0;
  function wrapTables() {
    for (const table of root.querySelectorAll('.renderedMarkdown table, .markdown table')) {
      if (table.parentElement?.classList.contains('kennel-table-scroll')) continue;
      const headings = [...table.querySelectorAll('thead th')].map((th) => th.textContent?.trim()).join(', ');
      const box = document.createElement('div');
      box.className = 'kennel-table-scroll';
      box.tabIndex = 0;
      box.setAttribute('role', 'region');
      // Landmark names must differ: the count tells two tables with the same columns apart.
      tableCount += 1;
      box.setAttribute('aria-label', `Table ${tableCount}${headings ? `: ${headings}` : ''}`);
      table.replaceWith(box);
      box.append(table);
    }
  }

  // A long list renders one tag at a time (opened from the sidebar or its heading): rendering
  // every operation of a large API (GitHub's has 1,100) took seconds.
  const operationCount = root.ownerDocument.querySelectorAll('.kennel-operations a').length;

  const ui = window.SwaggerUIBundle({
    domNode: root,
    spec,
    plugins: [KennelReferencePlugin],
    layout: 'BaseLayout',
    // Nothing leaves this site: no online validator badge, no config read from the query string.
    validatorUrl: null,
    queryConfigEnabled: false,
    deepLinking: true,
    docExpansion: operationCount > 60 ? 'none' : 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    showExtensions: false,
    // Kept only when the caller opts in (rememberKey below), not always.
    persistAuthorization: false,
    tryItOutEnabled: false,
    onComplete() {
      root.setAttribute('aria-busy', 'false');
      document.documentElement.dataset.referenceReady = 'true';
      // For `npm run bench -- reference` (time to interactive).
      performance.mark('kennel-reference-ready');
      for (const run of whenReady) run();
    },
  });

  /** Fixes Swagger UI leaves to us in the markup it renders (rendered again at any time). */
  function labelControls() {
    for (const select of root.querySelectorAll('.servers select:not([aria-label])'))
      select.setAttribute('aria-label', 'Server');
    // The console's other selects (a parameter's values, a media type) have no label either.
    for (const select of root.querySelectorAll('select:not([aria-label]):not([id])')) {
      const parameter = select.closest('tr[data-param-name]')?.getAttribute('data-param-name');
      select.setAttribute('aria-label', parameter ? `Value of ${parameter}` : 'Media type');
    }
    // The servers row sits outside Swagger UI's main: a named region, so it is in a landmark.
    for (const row of root.querySelectorAll('.scheme-container:not([role])')) {
      row.setAttribute('role', 'region');
      row.setAttribute('aria-label', 'Server');
    }
  }
  wrapTables();
  labelControls();
  new MutationObserver(() => {
    wrapTables();
    labelControls();
  }).observe(root, { childList: true, subtree: true });

  openDeepLinks(ui);
  searchOperations();

  const auth = document.querySelector('.kennel-auth');
  const authorize = auth?.querySelector('.kennel-authorize');
  if (authorize instanceof HTMLButtonElement && ui?.authActions && ui.authSelectors) {
    // As a dialog opened from a button should: focus moves into it (it renders on the next
    // frame), Escape closes it, and focus comes back to the button when it closes.
    let openedHere = false;
    authorize.addEventListener('click', () => {
      openedHere = true;
      ui.authActions.showDefinitions(ui.authSelectors.definitionsToAuthorize());
      requestAnimationFrame(() => {
        const first = root.querySelector('.dialog-ux input, .dialog-ux button');
        if (first instanceof HTMLElement) first.focus();
      });
    });
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && ui.authSelectors.shownDefinitions())
        ui.authActions.showDefinitions(false);
    });
    const remember = rememberKey(ui, document.getElementById('kennel-remember'));
    ui.getStore().subscribe(() => {
      // "Authorized" once a key is given, as Swagger UI's own button shows with its padlock.
      const text = ui.authSelectors.authorized().size > 0 ? 'Authorized' : 'Authorize';
      if (authorize.textContent !== text) authorize.textContent = text;
      remember();
      if (openedHere && !ui.authSelectors.shownDefinitions()) {
        openedHere = false;
        requestAnimationFrame(() => authorize.focus());
      }
    });
    auth.hidden = false;
  }

  /**
   * "Remember my key on this device": off unless the caller ticks it. Ticked, the keys given in
   * Authorize are kept in this site's localStorage (one origin per site, so per site) and given
   * back on the next visit; unticked, or after Logout in the dialog, they are forgotten. Returns
   * what to run on every change of Swagger UI's state.
   */
  function rememberKey(ui, box) {
    const KEY = 'kennel-reference-authorization';
    if (!(box instanceof HTMLInputElement)) return () => {};
    let saved = null;
    try {
      saved = window.localStorage.getItem(KEY);
    } catch {
      // Storage refused (private mode, policy): the box stays, keys are not kept.
    }
    const store = (value) => {
      try {
        if (value === null) window.localStorage.removeItem(KEY);
        else window.localStorage.setItem(KEY, value);
      } catch {}
      saved = value;
    };
    if (saved) {
      box.checked = true;
      try {
        ui.authActions.restoreAuthorization({ authorized: JSON.parse(saved) });
      } catch {
        store(null);
      }
    }
    const sync = () => {
      if (!box.checked) {
        if (saved !== null) store(null);
        return;
      }
      const authorized = ui.authSelectors.authorized();
      const value = authorized.size > 0 ? JSON.stringify(authorized.toJS()) : null;
      if (value !== saved) store(value);
    };
    box.addEventListener('change', sync);
    return sync;
  }

  /**
   * The sidebar's links and any later `#/{tag}/{operationId}` (Swagger UI reads the fragment only
   * at load): open the tag and the operation, bring it to the top and move focus to it.
   */
  function openDeepLinks(ui) {
    const open = () => {
      const match = /^#\/([^/]+)\/([^/]+)$/.exec(window.location.hash);
      if (!match) return;
      const tag = decodeURIComponent(match[1]);
      const linked = decodeURIComponent(match[2]);
      // Links name an operation with its operationId's non-word characters made `_` (as
      // src/web/changelog/operation-links.ts writes them); Swagger UI files it under the
      // operationId as declared (GitHub's are `actions/list-workflow-runs`).
      const id = declaredIds.get(linked) ?? linked;
      ui.layoutActions.show(['operations-tag', tag], true);
      ui.layoutActions.show(['operations', tag, id], true);
      // A long list is virtualised (only what is near the screen is rendered): Swagger UI's
      // own deep linking asks its list to scroll to the operation, so it exists to focus.
      ui.layoutActions.scrollToVirtualizedOperation?.(['operations', tag, id]);
      const idPart = (part) => CSS.escape(part.replace(/\s/g, '_'));
      const elementId = `operations-${idPart(tag)}-${idPart(id)}`;
      let tries = 0;
      const reveal = () => {
        const target = document.getElementById(elementId);
        if (!target) {
          tries += 1;
          if (tries < 600) requestAnimationFrame(reveal);
          return;
        }
        target.scrollIntoView({ block: 'start' });
        target.querySelector('.opblock-summary-control')?.focus({ preventScroll: true });
      };
      requestAnimationFrame(reveal);
      for (const link of document.querySelectorAll('.kennel-operations a[aria-current]'))
        link.removeAttribute('aria-current');
      document
        .querySelector(`.kennel-operations a[href="${CSS.escape(window.location.hash)}"]`)
        ?.setAttribute('aria-current', 'location');
    };
    const declaredIds = new Map();
    for (const item of Object.values(spec.paths || {})) {
      for (const op of Object.values(item && typeof item === 'object' ? item : {})) {
        const declared = op && typeof op === 'object' ? op.operationId : undefined;
        if (typeof declared === 'string' && declared.replace(/\s/g, '').length > 0)
          declaredIds.set(declared.replace(/\W/g, '_'), declared);
      }
    }
    window.addEventListener('hashchange', open);
    // Swagger UI's own reading of the fragment at load knows only its own form; this knows both.
    whenReady.push(open);
    // A link to the fragment already in the address bar brings no hashchange: open it anyway.
    document.querySelector('.kennel-operations')?.addEventListener('click', (event) => {
      const link = event.target instanceof Element ? event.target.closest('a') : null;
      if (link && link.getAttribute('href') === window.location.hash) open();
    });
  }

  /**
   * The sidebar's search: every word typed must appear in the operation's method, path, summary,
   * description or operationId (lowercased once, from the embedded document). Marks
   * `kennel-search` for `npm run bench -- reference`.
   */
  function searchOperations() {
    const box = document.querySelector('.kennel-search');
    const input = document.getElementById('kennel-search');
    const status = document.getElementById('kennel-search-status');
    if (!box || !(input instanceof HTMLInputElement) || !status) return;
    // The descriptions are not in the sidebar: read from the document, by method and path.
    const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
    const extra = new Map();
    for (const [path, item] of Object.entries(spec.paths || {})) {
      if (!item || typeof item !== 'object') continue;
      for (const [method, op] of Object.entries(item)) {
        if (METHODS.includes(method) && op && typeof op === 'object')
          extra.set(`${method} ${path}`, ` ${op.description || ''} ${op.operationId || ''}`.toLowerCase());
      }
    }
    const entries = [...document.querySelectorAll('.kennel-operations a')].map((link) => {
      const method = link.querySelector('.kennel-method')?.textContent?.toLowerCase() || '';
      const path = link.querySelector('.kennel-path')?.textContent || '';
      const text = (link.textContent || '').toLowerCase() + (extra.get(`${method} ${path}`) || '');
      return { item: link.parentElement, text, shown: true };
    });
    const groups = [...document.querySelectorAll('.kennel-operations .kennel-tag')].map((section) => ({
      section,
      items: [...section.querySelectorAll('li')],
    }));
    const filter = () => {
      performance.mark('kennel-search-start');
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      let found = 0;
      for (const entry of entries) {
        const shown = words.every((word) => entry.text.includes(word));
        if (shown) found += 1;
        if (shown !== entry.shown) {
          entry.shown = shown;
          entry.item.hidden = !shown;
        }
      }
      for (const group of groups) group.section.hidden = !group.items.some((item) => !item.hidden);
      status.textContent =
        words.length === 0 ? '' : found === 1 ? '1 operation matches' : `${found} operations match`;
      performance.measure('kennel-search', 'kennel-search-start');
    };
    input.addEventListener('input', filter);
    box.hidden = false;
  }
})();
