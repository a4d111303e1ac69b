import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { HOSTILE_TITLE, V1, V2, V3 } from '../support/changelog-documents.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { seedSites } from '../support/edge-site.ts';
import { requestAs } from '../support/http.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

const ATOM = 'http://www.w3.org/2005/Atom';
const children = (parent: Element, name: string) =>
  Array.from(parent.childNodes).filter(
    (node): node is Element => node.nodeType === 1 && (node as Element).localName === name,
  );
const only = (parent: Element, name: string) => {
  const found = children(parent, name);
  assert.equal(found.length, 1, `exactly one atom:${name} in ${parent.localName}`);
  assert.equal(found[0]?.namespaceURI, ATOM);
  return found[0] as Element;
};
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/** Parses XML strictly: any error or fatal error (not well-formed) fails the test. */
function parseXml(text: string) {
  return new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') throw new Error(`not well-formed XML: ${message}`);
    },
  }).parseFromString(text, 'application/xml');
}

/**
 * Issue 26's changelog over a real edge: `/changelog` (HTML) and `/changelog.atom` (Atom 1.0) of a
 * published site, from the publications its deploys wrote. Deploys go through the management API
 * at the platform domain, as `kennel deploy` sends them.
 */
for (const dialect of testDialects()) {
  describe(`a published site's changelog and feed (${dialect})`, () => {
    let p: TestPlatform;
    let edge: PlainEdge;
    let token: string;

    const deploy = async (slug: string, document: unknown, extra: Record<string, unknown> = {}) => {
      const answer = await requestAs(edge.port, 'platform.test', `/api/v1/projects/${slug}/deploys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ document: JSON.stringify(document), ...extra }),
      });
      assert.equal(answer.status, 201, answer.text);
      return JSON.parse(answer.text) as { id: number; number: number; breaking: boolean };
    };

    before(async () => {
      p = await startPlatformContext(dialect);
      const { owner } = await seedSites(
        p.ctx,
        ['pets', 'quiet'].map((slug) => ({ slug, originUrl: 'http://127.0.0.1:9/', document: false })),
      );
      edge = await startPlainEdge(p);
      token = (await createToken(p.ctx, owner, 'tests')).token;
      await deploy('pets', V1);
      p.clock.advance(60_000);
      await deploy('pets', V2);
      p.clock.advance(60_000);
      const refused = await requestAs(edge.port, 'platform.test', '/api/v1/projects/pets/deploys', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ document: JSON.stringify(V3) }),
      });
      assert.equal(refused.status, 409, 'a breaking deploy is refused unless allowed');
      assert.equal(JSON.parse(refused.text).code, 'breaking_changes');
      const third = await deploy('pets', V3, { allowBreaking: true });
      assert.equal(third.breaking, true);
      await deploy('quiet', V1);
    });

    after(() => closeAll(edge, p));

    it('lists every deploy newest first, the breaking one marked, with dates and operations linked into the reference', async () => {
      const page = await requestAs(edge.port, 'pets.platform.test', '/changelog');
      assert.equal(page.status, 200);
      assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(page.headers['cache-control'], 'no-cache');
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
      const html = page.text;
      const headings = [...html.matchAll(/<h2 id="deploy-(\d+)-title">(.*?)<\/h2>/g)].map((m) => m[2]);
      assert.deepEqual(headings, [
        'Deploy #3 <span class="kennel-breaking-mark">Breaking</span>',
        'Deploy #2',
        'Deploy #1',
      ]);
      assert.match(html, /<time datetime="2026-11-22T12:02:00\.000Z">22 November 2026, 12:02 UTC<\/time>/);
      assert.match(html, /<time datetime="2026-11-22T12:00:00\.000Z">22 November 2026, 12:00 UTC<\/time>/);
      const third = html.slice(html.indexOf('id="deploy-3"'), html.indexOf('id="deploy-2"'));
      // Removed: named, but not linked (the live reference no longer has it).
      assert.match(
        third,
        /<li class="kennel-change kennel-change-breaking"><span class="kennel-level">Breaking<\/span> <span class="kennel-change-message"><code>DELETE \/pets\/\{petId\}<\/code> was removed/,
      );
      const second = html.slice(html.indexOf('id="deploy-2"'), html.indexOf('id="deploy-1"'));
      assert.match(second, /<a href="\/#\/pets\/listToys"><code>GET \/pets\/\{petId\}\/toys<\/code><\/a>/);
      // No operationId, no tag: Swagger UI's own name for it, under `default`.
      assert.match(
        second,
        /<a href="\/#\/default\/get_search__script_alert_1___script_"><code>GET \/search\/&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/code><\/a>/,
      );
      assert.match(html.slice(html.indexOf('id="deploy-1"')), /The API was first published\./);
      // Nothing the document or a change holds becomes markup.
      assert.doesNotMatch(html, /<script/i);
      assert.match(
        html,
        /<title>&lt;script&gt;alert\(&quot;title&quot;\)&lt;\/script&gt; &amp; Pets — changelog<\/title>/,
      );
      assert.match(
        html,
        /<link rel="alternate" type="application\/atom\+xml" title="[^"]*" href="\/changelog\.atom">/,
      );
    });

    it('links the feed from the reference page', async () => {
      const page = await requestAs(edge.port, 'pets.platform.test', '/');
      assert.equal(page.status, 200);
      assert.match(
        page.text,
        /<link rel="alternate" type="application\/atom\+xml" title="[^"]*changelog" href="\/changelog\.atom">/,
      );
      assert.match(page.text, /<a href="\/changelog">Changelog<\/a>/);
    });

    it('serves an Atom 1.0 feed with the required elements, entries newest first, hostile text escaped', async () => {
      const answer = await requestAs(edge.port, 'pets.platform.test', '/changelog.atom');
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-type'], 'application/atom+xml; charset=utf-8');
      const xml = parseXml(answer.text);
      const feed = xml.documentElement as Element;
      assert.equal(feed.localName, 'feed');
      assert.equal(feed.namespaceURI, ATOM);
      const feedId = only(feed, 'id').textContent ?? '';
      const project = await p.ctx.db
        .selectFrom('projects')
        .select(['id', 'created_at'])
        .where('slug', '=', 'pets')
        .executeTakeFirstOrThrow();
      assert.equal(project.created_at.slice(0, 10), '2026-11-22');
      assert.equal(feedId, `tag:platform.test,2026-11-22:projects/${project.id}/changelog`);
      assert.equal(only(feed, 'title').textContent, `${HOSTILE_TITLE} changelog`);
      assert.equal(only(feed, 'updated').textContent, '2026-11-22T12:02:00.000Z');
      assert.equal(only(only(feed, 'author'), 'name').textContent, HOSTILE_TITLE);
      const links = children(feed, 'link').map((link) => [
        link.getAttribute('rel'),
        link.getAttribute('href'),
      ]);
      const origin = `http://pets.platform.test:${edge.port}`;
      assert.deepEqual(links, [
        ['self', `${origin}/changelog.atom`],
        ['alternate', `${origin}/changelog`],
      ]);

      const entries = children(feed, 'entry');
      assert.deepEqual(
        entries.map((entry) => only(entry, 'title').textContent),
        ['Deploy #3', 'Deploy #2', 'Deploy #1'],
      );
      const ids = entries.map((entry) => only(entry, 'id').textContent ?? '');
      assert.equal(new Set(ids).size, 3, 'entry ids are unique');
      for (const id of ids) assert.ok(id.startsWith(`${feedId}:publication-`), id);
      for (const entry of entries) {
        assert.match(only(entry, 'updated').textContent ?? '', RFC3339);
        assert.equal(only(entry, 'content').getAttribute('type'), 'html');
      }
      assert.deepEqual(
        entries.map((entry) => only(entry, 'updated').textContent),
        ['2026-11-22T12:02:00.000Z', '2026-11-22T12:01:00.000Z', '2026-11-22T12:00:00.000Z'],
      );
      assert.equal(children(entries[0] as Element, 'category')[0]?.getAttribute('term'), 'breaking');
      assert.equal(children(entries[1] as Element, 'category').length, 0);
      // The content is HTML as text: once the XML is read, the hostile path is still escaped HTML.
      const second = only(entries[1] as Element, 'content').textContent ?? '';
      assert.match(
        second,
        new RegExp(
          `<a href="${origin.replace(/\./g, '\\.')}/#/default/get_search__script_alert_1___script_"><code>GET /search/&lt;script&gt;alert\\(1\\)&lt;/script&gt;</code></a>`,
        ),
      );
      assert.doesNotMatch(second, /<script/);
      assert.doesNotMatch(answer.text, /<script/);
    });

    it('answers the feed with the address it was asked at, and 304 when unchanged', async () => {
      const first = await requestAs(edge.port, 'pets.platform.test', '/changelog.atom');
      const again = await requestAs(edge.port, 'pets.platform.test', '/changelog.atom', {
        headers: { 'if-none-match': String(first.headers.etag) },
      });
      assert.equal(again.status, 304);
    });

    it('a site with no publications shows an empty changelog and an empty feed', async () => {
      // The quiet site's one publication is removed: a site published before the changelog existed.
      await p.ctx.db
        .deleteFrom('publications')
        .where(
          'project_id',
          '=',
          (
            await p.ctx.db
              .selectFrom('projects')
              .select('id')
              .where('slug', '=', 'quiet')
              .executeTakeFirstOrThrow()
          ).id,
        )
        .execute();
      const page = await requestAs(edge.port, 'quiet.platform.test', '/changelog');
      assert.equal(page.status, 200);
      assert.match(page.text, /Nothing has been published here yet\./);
      assert.doesNotMatch(page.text, /Deploy #/);
      const feed = await requestAs(edge.port, 'quiet.platform.test', '/changelog.atom');
      assert.equal(feed.status, 200);
      const root = parseXml(feed.text).documentElement as Element;
      assert.equal(children(root, 'entry').length, 0);
      assert.match(only(root, 'updated').textContent ?? '', RFC3339);
      assert.ok(only(root, 'author'));
    });

    it('shows a new publication at once (the cache follows the live deploy)', async () => {
      p.clock.advance(60_000);
      await deploy('pets', V3);
      const page = await requestAs(edge.port, 'pets.platform.test', '/changelog');
      assert.match(page.text, /<h2 id="deploy-4-title">Deploy #4<\/h2>[\s\S]*Nothing changed for callers\./);
    });
  });
}
