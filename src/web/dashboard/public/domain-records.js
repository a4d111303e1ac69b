// @ts-check
import { copyText, h } from './dom.js';
import { recordsHeading } from './domain-words.js';

/** @typedef {import('./domains-api.js').Domain} Domain */

/** Name and value are what people copy; type and TTL are read (and never wrap). */
const FIELDS = /** @type {const} */ ([
  ['type', 'Type', false],
  ['name', 'Name', true],
  ['value', 'Value', true],
  ['ttl', 'TTL', false],
]);
const ROLE_WORDS = { required: 'Required', alternative: 'Alternative', ownership: 'Ownership' };

/**
 * The records to create (or in use) with copy buttons for what people copy; on phones each row
 * becomes labelled lines (styles.css).
 * @param {Domain} domain
 * @param {number} id the card's id, for element ids
 */
export function recordsTable(domain, id) {
  const many = domain.records.length > 1;
  return h(
    'div',
    { class: 'records' },
    h('h4', { id: `domain-${id}-records` }, recordsHeading(domain)),
    h(
      'table',
      { class: 'table record-table', 'aria-labelledby': `domain-${id}-records` },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          FIELDS.map(([field, label]) => h('th', { scope: 'col', class: `col-${field}` }, label)),
          many ? h('th', { scope: 'col', class: 'col-use' }, 'Use') : null,
        ),
      ),
      h(
        'tbody',
        {},
        domain.records.map((record, index) =>
          h(
            'tr',
            { dataset: { role: record.role } },
            FIELDS.map(([field, label, copyable]) => {
              const value = String(record[field]);
              const code = h('code', { dataset: { field } }, value);
              if (!copyable) return h('td', { 'data-label': label, class: `col-${field}` }, code);
              const button = h(
                'button',
                {
                  type: 'button',
                  class: 'copy',
                  'aria-label': `Copy ${label} ${value}`,
                  dataset: { focus: `copy-${index}-${field}` },
                  onclick: () => copyText(button, value, `${label} ${value}`),
                },
                'Copy',
              );
              return h(
                'td',
                { 'data-label': label, class: `col-${field}` },
                h('span', { class: 'cell' }, code, button),
              );
            }),
            many
              ? h(
                  'td',
                  { 'data-label': 'Use', class: 'col-use' },
                  // One grid item on phones, where each cell is a label/value grid.
                  h(
                    'span',
                    {},
                    ROLE_WORDS[record.role],
                    record.note ? h('span', { class: 'muted small block' }, record.note) : null,
                  ),
                )
              : null,
          ),
        ),
      ),
    ),
  );
}
