import { escapeHtml } from '../../lib/html.ts';
import type { Change } from '../../lib/openapi-diff/index.ts';

/** One time a site's live deploy changed, as the changelog shows it (ISSUE 26's `Publication`). */
export interface ChangelogEntry {
  readonly id: number;
  readonly deployNumber: number;
  readonly publishedAt: string;
  readonly changes: readonly Change[];
  readonly breaking: boolean;
}

/** What a site's changelog is made of; read once per live deploy (src/edge/changelog.ts). */
export interface Changelog {
  /** The API's title (`info.title` of the live document). */
  readonly title: string;
  readonly version: string;
  /** Newest first. */
  readonly entries: readonly ChangelogEntry[];
  /** Operation (`GET /pets/{petId}`) → its fragment in the reference (operation-links.ts). */
  readonly links: Readonly<Record<string, string>>;
  /**
   * The feed's permanent id, a tag URI (RFC 4151) naming the project, not the address it was
   * read at: a site reached by its default address and by a custom domain is one feed.
   */
  readonly feedId: string;
  /** When the feed last changed: the newest entry, or when the live deploy was made. */
  readonly updated: string;
  /** The project's very first publication, when it is among `entries` (it has no changes to list). */
  readonly firstEntryId?: number;
}

export const CHANGELOG_PATH = '/changelog';
export const CHANGELOG_FEED_PATH = '/changelog.atom';

const LEVEL_NAMES: Record<Change['level'], string> = {
  breaking: 'Breaking',
  warning: 'Warning',
  info: 'Change',
};

/** Levels in the order a reader needs them: what breaks first. */
const LEVEL_ORDER: Record<Change['level'], number> = { breaking: 0, warning: 1, info: 2 };

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** `2026-11-27T03:41:00.000Z` → `27 November 2026, 03:41 UTC` (one form for every reader). */
function readableDate(iso: string): string {
  const at = new Date(iso);
  const hh = String(at.getUTCHours()).padStart(2, '0');
  const mm = String(at.getUTCMinutes()).padStart(2, '0');
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()}, ${hh}:${mm} UTC`;
}

/** An RFC 3339 timestamp, as Atom requires, whatever form the database gave. */
const rfc3339 = (iso: string) => new Date(iso).toISOString();

const sortedChanges = (changes: readonly Change[]) =>
  [...changes].sort((a, b) => LEVEL_ORDER[a.level] - LEVEL_ORDER[b.level]);

/**
 * One deploy's changes as an HTML list; `base` prefixes the reference links ('' on the site's own
 * pages, the site's address in the feed, whose readers show it elsewhere).
 */
function changeList(entry: ChangelogEntry, changelog: Changelog, base: string): string {
  if (entry.changes.length === 0) {
    return `<p class="kennel-no-changes">${entry.id === changelog.firstEntryId ? 'The API was first published.' : 'Nothing changed for callers.'}</p>`;
  }
  const items = sortedChanges(entry.changes).map((change) => {
    const { operation, message } = change;
    const link = operation === undefined ? undefined : changelog.links[operation];
    const code =
      operation === undefined
        ? ''
        : link === undefined
          ? `<code>${escapeHtml(operation)}</code>`
          : `<a href="${escapeHtml(`${base}/${link}`)}"><code>${escapeHtml(operation)}</code></a>`;
    // The engine's sentences usually start with the operation: it is not written twice.
    const text =
      operation !== undefined && message.startsWith(operation)
        ? `${code}${escapeHtml(message.slice(operation.length))}`
        : `${code}${code === '' ? '' : ' '}${escapeHtml(message)}`;
    return `<li class="kennel-change kennel-change-${change.level}"><span class="kennel-level">${LEVEL_NAMES[change.level]}</span> <span class="kennel-change-message">${text}</span></li>`;
  });
  return `<ul class="kennel-changes">${items.join('')}</ul>`;
}

const countOf = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function summaryOf(entry: ChangelogEntry, changelog: Changelog): string {
  if (entry.id === changelog.firstEntryId && entry.changes.length === 0) return 'first publication';
  const breaking = entry.changes.filter((change) => change.level === 'breaking').length;
  const total = countOf(entry.changes.length, 'change', 'changes');
  return breaking > 0 ? `${total}, ${breaking} breaking` : total;
}

export interface PageAssets {
  /** reference.css and changelog.css, at their versioned URLs (src/web/reference/reference-assets.ts). */
  url(name: 'reference.css' | 'changelog.css' | 'favicon.png'): string;
}

/**
 * A site's `/changelog`: every publication of the site, newest first, breaking ones marked, each
 * change linked to its operation in the reference at `/`. Links are relative, so one rendering
 * serves every address of the site.
 */
export function renderChangelogPage(changelog: Changelog, assets: PageAssets): string {
  const title = escapeHtml(changelog.title);
  const entries = changelog.entries.map((entry) => {
    const id = `deploy-${entry.deployNumber}`;
    const mark = entry.breaking ? ' <span class="kennel-breaking-mark">Breaking</span>' : '';
    return `<li><article id="${id}" class="kennel-entry${entry.breaking ? ' kennel-entry-breaking' : ''}" aria-labelledby="${id}-title">
<h2 id="${id}-title">Deploy #${entry.deployNumber}${mark}</h2>
<p class="kennel-entry-meta"><time datetime="${escapeHtml(rfc3339(entry.publishedAt))}">${readableDate(entry.publishedAt)}</time> · ${summaryOf(entry, changelog)}</p>
${changeList(entry, changelog, '')}
</article></li>`;
  });
  const body =
    entries.length === 0
      ? '<p class="kennel-empty">Nothing has been published here yet. Each deploy that goes live will be listed with its changes.</p>'
      : `<ol class="kennel-entries" reversed>${entries.join('\n')}</ol>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — changelog</title>
<meta name="description" content="Every change published to the API ${title}, newest first.">
<link rel="icon" href="${assets.url('favicon.png')}">
<link rel="alternate" type="application/atom+xml" title="${title} changelog" href="${CHANGELOG_FEED_PATH}">
<link rel="stylesheet" href="${assets.url('reference.css')}">
<link rel="stylesheet" href="${assets.url('changelog.css')}">
</head>
<body>
<a class="kennel-skip" href="#changelog">Skip to the changelog</a>
<header class="kennel-header">
<div class="kennel-header-inner">
<p class="kennel-brand"><a href="/">${title}</a> <span class="kennel-version">${escapeHtml(changelog.version)}</span></p>
<nav aria-label="Site"><a href="/">Reference</a> <a href="${CHANGELOG_PATH}" aria-current="page">Changelog</a> <a href="/openapi.json">openapi.json</a> <a href="/openapi.yaml">openapi.yaml</a></nav>
</div>
</header>
<main id="changelog" class="kennel-changelog" tabindex="-1">
<h1>Changelog</h1>
<p class="kennel-intro">What changed in this API at each deploy, newest first. Breaking changes can stop existing callers from working. Follow the changes in a feed reader: <a href="${CHANGELOG_FEED_PATH}">Atom feed</a>.</p>
${body}
</main>
</body>
</html>
`;
}

/**
 * Characters XML 1.0 does not allow at all (C0 controls but tab, newline and return; lone
 * surrogates; U+FFFE/U+FFFF): escaping cannot carry them, so they are dropped. A document's summary
 * may hold anything.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters XML forbids.
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff\ufffe\uffff]/gu;

/** Text for XML element content or a quoted attribute. */
const escapeXml = (text: string) => escapeHtml(text.replace(NOT_XML, ''));

/**
 * `/changelog.atom`: the same entries as an Atom 1.0 feed (RFC 4287). `origin` is the site's
 * address as the request reached it (`https://shop.example`), for the links; ids do not depend
 * on it. Each entry's content is the change list as escaped HTML (`type="html"`).
 */
export function renderChangelogFeed(changelog: Changelog, origin: string): string {
  const title = escapeXml(changelog.title);
  const entries = changelog.entries.map((entry) => {
    const published = rfc3339(entry.publishedAt);
    const counted = summaryOf(entry, changelog);
    const summary = `${counted.charAt(0).toUpperCase()}${counted.slice(1)}${entry.breaking ? ': existing callers may break' : ''}.`;
    return `<entry>
<id>${escapeXml(`${changelog.feedId}:publication-${entry.id}`)}</id>
<title>Deploy #${entry.deployNumber}</title>
<updated>${published}</updated>
<published>${published}</published>
<link rel="alternate" type="text/html" href="${escapeXml(`${origin}${CHANGELOG_PATH}#deploy-${entry.deployNumber}`)}"/>
${entry.breaking ? '<category term="breaking" label="Breaking changes"/>\n' : ''}<summary>${escapeXml(summary)}</summary>
<content type="html">${escapeXml(changeList(entry, changelog, origin))}</content>
</entry>`;
  });
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>${escapeXml(changelog.feedId)}</id>
<title>${title} changelog</title>
<subtitle>Every change published to the API ${title}, newest first.</subtitle>
<updated>${rfc3339(changelog.updated)}</updated>
<author><name>${title}</name><uri>${escapeXml(`${origin}/`)}</uri></author>
<link rel="self" type="application/atom+xml" href="${escapeXml(`${origin}${CHANGELOG_FEED_PATH}`)}"/>
<link rel="alternate" type="text/html" href="${escapeXml(`${origin}${CHANGELOG_PATH}`)}"/>
<generator>Kennel</generator>
${entries.join('\n')}
</feed>
`;
}
