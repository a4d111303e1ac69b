import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { requestAs } from '../support/http.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

/**
 * Issue 26: real public documents deploy at the sizes people publish, through the management API
 * with the default limits, and are served by a real edge; what is refused says why, where (JSON
 * pointer, line, column) and what to do, every problem at once.
 */
const GITHUB = readFileSync(
  new URL('../../node_modules/@octokit/openapi/generated/api.github.com.json', import.meta.url),
  'utf8',
);
const GALAXY_JSON = readFileSync(
  new URL('../../node_modules/@scalar/galaxy/dist/latest.json', import.meta.url),
  'utf8',
);
const GALAXY_YAML = readFileSync(
  new URL('../../node_modules/@scalar/galaxy/dist/latest.yaml', import.meta.url),
  'utf8',
);

/**
 * OpenAPI 3.1 in the shape of the Train Travel API and Scalar's Galaxy: `jsonSchemaDialect`,
 * `webhooks`, type arrays, `const`, `examples`, a generic page whose item type is bound by a
 * `$dynamicAnchor` defined once per `$id`, and an external `$ref` inside a vendor extension.
 */
const TRAIN_TRAVEL = `openapi: 3.1.0
info:
  title: Train Travel API
  version: 1.0.0
jsonSchemaDialect: https://spec.openapis.org/oas/3.1/dialect/base
servers:
  - url: https://api.example.com
paths:
  /stations:
    get:
      operationId: get-stations
      x-speakeasy-retries:
        $ref: ./retries.yaml
      responses:
        '200':
          description: Stations
          content:
            application/json:
              schema:
                $id: https://example.com/schemas/station-page
                $defs:
                  itemType:
                    $dynamicAnchor: itemType
                    $ref: '#/components/schemas/Station'
                $ref: https://example.com/schemas/page
  /trips:
    get:
      operationId: get-trips
      responses:
        '200':
          description: Trips
          content:
            application/json:
              schema:
                $id: https://example.com/schemas/trip-page
                $defs:
                  itemType:
                    $dynamicAnchor: itemType
                    type: object
                    properties:
                      id: { type: string, format: uuid }
                      bicycles: { type: [boolean, 'null'] }
                $ref: https://example.com/schemas/page
webhooks:
  newBooking:
    post:
      operationId: new-booking
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                kind: { const: booking }
              examples:
                - kind: booking
      responses:
        '200':
          description: Received
components:
  schemas:
    Station:
      type: object
      required: [id, name]
      properties:
        id: { type: string, format: uuid, examples: [efdbb9d1-02c2-4bc3-afb7-6788d8782b1e] }
        name: { type: string }
        country_code: { type: [string, 'null'], pattern: '^[A-Z]{2}$' }
    Page:
      $id: https://example.com/schemas/page
      type: object
      $defs:
        itemType:
          $dynamicAnchor: itemType
          not: true
      properties:
        data:
          type: array
          items:
            $dynamicRef: '#itemType'
        links:
          type: object
          properties:
            next: { type: string, format: uri }
`;

/** Three independent mistakes of a YAML document, one of them `content: nope`. */
const THREE_MISTAKES = `openapi: 3.0.3
info:
  title: Pets
  version: '1'
paths:
  /pets:
    get:
      responses:
        '200':
          description: Pets
          content: nope
    post:
      sumary: Add a pet
      responses:
        '201':
          $ref: '#/components/responses/Created'
`;

interface DeployAnswer {
  status: string;
  problems: string[];
  problemDetails: { pointer: string; line: number | null; column: number | null; message: string }[];
}

for (const dialect of testDialects()) {
  describe(`real documents deploy and are served (${dialect})`, () => {
    let p: TestPlatform;
    let edge: PlainEdge;
    let app: ReturnType<typeof buildPlatformApp>;
    let token: string;
    let teamId: number;
    let owner: Awaited<ReturnType<typeof seedTeam>>['owner'];

    before(async () => {
      p = await startPlatformContext(dialect, { PLATFORM_DOMAIN: 'localhost' });
      const seeded = await seedTeam(p.ctx, 'enterprise');
      owner = seeded.owner;
      teamId = seeded.team.id;
      app = buildPlatformApp(p.ctx);
      await app.ready();
      token = (await createToken(p.ctx, owner, 'tests')).token;
      edge = await startPlainEdge(p);
    });
    after(() => closeAll(edge, app, p));

    /** A new project (so no deploy is gated against an earlier one) and a deploy to it. */
    async function deployNew(slug: string, document: string, originUrl = 'http://127.0.0.1:9') {
      await createProject(p.ctx, owner, { teamId, slug, name: slug, originUrl });
      const answer = await app.inject({
        method: 'POST',
        url: `/api/v1/projects/${slug}/deploys`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ document }),
      });
      assert.equal(answer.statusCode, 201, answer.body.slice(0, 2000));
      return answer.json() as DeployAnswer;
    }

    /** Deploys `document` as a new project `slug`: a failed deploy, with these problems (line and column). */
    async function deployFailing(slug: string, document: string, details: DeployAnswer['problemDetails']) {
      const deployed = await deployNew(slug, document);
      assert.equal(deployed.status, 'failed');
      assert.deepEqual(deployed.problemDetails, details);
      return deployed;
    }

    it("GitHub's full REST description (13 MB as shipped) deploys with the default limits and is served, its reference too", async () => {
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const deployed = await deployNew('hub', GITHUB);
      assert.deepEqual([deployed.status, deployed.problems], ['succeeded', []]);
      const started = performance.now();
      const served = await requestAs(edge.port, 'hub.localhost', '/openapi.json', { hangMs: 50_000 });
      const firstMs = performance.now() - started;
      delay.disable();
      assert.equal(served.status, 200);
      const document = JSON.parse(served.text) as { paths: object; servers: { url: string }[] };
      assert.equal(Object.keys(document.paths).length, Object.keys(JSON.parse(GITHUB).paths).length);
      assert.equal(document.servers[0]?.url, 'https://hub.localhost/api');
      const page = await requestAs(edge.port, 'hub.localhost', '/');
      assert.equal(page.status, 200);
      assert.ok(
        page.text.includes('<title>GitHub&#39;s official OpenAPI spec'),
        'the reference page of GitHub',
      );
      // The loop that serves every tenant was never held for long (parsing, validating and
      // rendering run in worker threads).
      const stallMs = delay.max / 1e6;
      console.log(
        `GitHub (${dialect}): first /openapi.json ${Math.round(firstMs)} ms, longest loop stall ${Math.round(stallMs)} ms`,
      );
      assert.ok(stallMs < 1500, `the event loop stalled ${Math.round(stallMs)} ms`);
    });

    it("Scalar's Galaxy (OpenAPI 3.1.1, $dynamicAnchor once per $id) deploys, as JSON and as YAML", async () => {
      for (const [slug, document] of [
        ['galaxy-json', GALAXY_JSON],
        ['galaxy-yaml', GALAXY_YAML],
      ] as const) {
        const deployed = await deployNew(slug, document);
        assert.deepEqual([slug, deployed.status, deployed.problems], [slug, 'succeeded', []]);
      }
    });

    it('a 3.1 document in the shape of the Train Travel API deploys; the $ref inside its vendor extension is kept as written', async () => {
      const deployed = await deployNew('trains', TRAIN_TRAVEL);
      assert.deepEqual([deployed.status, deployed.problems], ['succeeded', []]);
      const served = await requestAs(edge.port, 'trains.localhost', '/openapi.json');
      const document = JSON.parse(served.text) as {
        paths: Record<string, { get: Record<string, unknown> }>;
        webhooks: object;
      };
      assert.deepEqual(document.paths['/stations']?.get['x-speakeasy-retries'], { $ref: './retries.yaml' });
      assert.deepEqual(Object.keys(document.webhooks), ['newBooking']);
    });

    it('an external $ref where OpenAPI resolves it is refused: why, where (line and column) and what to do', async () => {
      const document = TRAIN_TRAVEL.replace("$ref: '#/components/schemas/Station'", '$ref: ./station.yaml');
      const deployed = await deployFailing('trains-split', document, [
        {
          pointer: '/paths/~1stations/get/responses/200/content/application~1json/schema/$defs/itemType/$ref',
          line: 24,
          column: 21,
          message:
            '$ref "./station.yaml" points outside this document; Kennel publishes one self-contained document. Bundle the referenced files into it first (e.g. `npx @redocly/cli bundle openapi.yaml -o bundled.yaml`), or point it at a part of this document.',
        },
      ]);
      assert.equal(
        deployed.problems[0],
        `/paths/~1stations/get/responses/200/content/application~1json/schema/$defs/itemType/$ref (line 24, column 21): ${deployed.problemDetails[0]?.message}`,
      );
    });

    it('reports every problem at once, each with its line and column, `content: nope` included, without combinator noise', async () => {
      await deployFailing('pets', THREE_MISTAKES, [
        {
          pointer: '/paths/~1pets/get/responses/200/content',
          line: 11,
          column: 11,
          message: 'Must be an object, not a string.',
        },
        {
          pointer: '/paths/~1pets/post/sumary',
          line: 13,
          column: 7,
          message:
            '"sumary" is not a field OpenAPI defines here: remove it, correct its name, or rename it "x-sumary" to keep it as an extension.',
        },
        {
          pointer: '/paths/~1pets/post/responses/201/$ref',
          line: 16,
          column: 11,
          message:
            '$ref "#/components/responses/Created" points to nothing: this document has no /components/responses/Created. Add it, or correct the reference.',
        },
      ]);
    });

    it("keeps per-operation servers naming other hosts, drops those naming the origin, and names the site's API first", async () => {
      const document = {
        openapi: '3.0.3',
        info: { title: 'Files', version: '1' },
        servers: [{ url: 'https://api.files.test/' }],
        paths: {
          '/files': {
            post: {
              servers: [{ url: 'https://uploads.files.test/' }],
              responses: { '200': { description: 'Uploaded' } },
            },
            get: {
              servers: [{ url: 'https://api.files.test/v1' }],
              responses: { '200': { description: 'Files' } },
            },
          },
        },
      };
      const deployed = await deployNew('files', JSON.stringify(document), 'https://api.files.test');
      assert.equal(deployed.status, 'succeeded');
      const served = JSON.parse((await requestAs(edge.port, 'files.localhost', '/openapi.json')).text) as {
        servers: unknown;
        paths: { '/files': { post: { servers?: unknown }; get: { servers?: unknown } } };
      };
      assert.deepEqual(served.servers, [
        { url: 'https://files.localhost/api', description: 'The API on this site' },
        { url: '/api', description: 'The API on this site, relative to the address of this document' },
      ]);
      assert.deepEqual(served.paths['/files'].post.servers, [{ url: 'https://uploads.files.test/' }]);
      assert.equal(served.paths['/files'].get.servers, undefined);
    });
  });
}
