// The published API reference: boots Swagger UI (served from this site, see reference-assets.ts)
// with the active deploy's OpenAPI document, embedded in the page by the edge, and a plugin that
// adds what Swagger UI does not do by itself:
// - a console button named "Test it"; none on operations marked `x-hideTryItPanel: true`;
// - the sunset date (`x-sunset`) next to a deprecated operation;
// - a note when a live answer carries `Deprecation` or `Sunset` headers;
// - the header's Authorize button, which opens Swagger UI's authorization dialog (its own button
//   sits below the document's description, screens down);
// - a scrolling box around every table in rendered Markdown, so a wide table scrolls by itself on
//   a phone instead of squeezing its columns or widening the page.
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

  function KennelReferencePlugin(system) {
    return {
      statePlugins: {
        spec: {
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
        OperationSummaryPath: (Original, system) => (props) => {
          const h = system.React.createElement;
          const operation = props.operationProps;
          const deprecated = operation.get('deprecated');
          const sunset = system.specSelectors
            .specJson()
            .getIn(['paths', operation.get('path'), operation.get('method'), 'x-sunset']);
          if (!deprecated) return h(Original, props);
          return h(
            system.React.Fragment,
            null,
            h(Original, props),
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

  const ui = window.SwaggerUIBundle({
    domNode: root,
    spec,
    plugins: [KennelReferencePlugin],
    layout: 'BaseLayout',
    // Nothing leaves this site: no online validator badge, no config read from the query string.
    validatorUrl: null,
    queryConfigEnabled: false,
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    showExtensions: false,
    persistAuthorization: false,
    tryItOutEnabled: false,
    onComplete() {
      root.setAttribute('aria-busy', 'false');
      document.documentElement.dataset.referenceReady = 'true';
      // For `npm run bench -- reference` (time to interactive).
      performance.mark('kennel-reference-ready');
    },
  });

  wrapTables();
  new MutationObserver(wrapTables).observe(root, { childList: true, subtree: true });

  const authorize = document.querySelector('.kennel-authorize');
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
    ui.getStore().subscribe(() => {
      // "Authorized" once a key is given, as Swagger UI's own button shows with its padlock.
      const text = ui.authSelectors.authorized().size > 0 ? 'Authorized' : 'Authorize';
      if (authorize.textContent !== text) authorize.textContent = text;
      if (openedHere && !ui.authSelectors.shownDefinitions()) {
        openedHere = false;
        requestAnimationFrame(() => authorize.focus());
      }
    });
    authorize.hidden = false;
  }
})();
