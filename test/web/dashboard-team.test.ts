import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { addMember } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { PLAN_NAMES } from '../../src/platform/plans.ts';
import { readOpenApiDocument } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { startWebhookWorker } from '../../src/platform/webhooks/index.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { laidOutText, overflow, signIn } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const WAIT = { timeout: 30_000 };
const VALID_YAML = `openapi: 3.1.0
info:
  title: Orders
  version: "1.0"
paths:
  /orders:
    get:
      summary: List orders
      responses:
        "200":
          description: The orders
`;
/** Valid YAML, not a valid OpenAPI 3.0 document: the operation has no responses. */
const INVALID_YAML = `openapi: 3.0.3
info:
  title: Orders
  version: "2.0"
paths:
  /orders/{id}:
    get:
      summary: Read an order
      parameters:
        - name: id
          in: path
          required: true
          schema: { type: integer }
`;

/**
 * Issue 15's team and project pages in Chromium, on the management app over loopback: a new
 * project from the form (the API's messages next to their fields), deploys from a file and from
 * pasted text (the validator's problems listed, the live deploy kept), the team's plan (platform
 * admins change it; owners and members are told whom to ask) and its webhook against a real
 * receiver that verifies every signature (secret shown once, test event, redelivery, rotation).
 */
for (const dialect of testDialects()) {
  describe(`dashboard: team settings, new project, deploys (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let receiver: WebhookReceiver;
    let worker: ReturnType<typeof startWebhookWorker>;
    const workerErrors: unknown[] = [];
    let chromium: TestBrowser;
    let base: string;
    let teamId: number;
    let ownerToken: string;
    const contexts: BrowserContext[] = [];
    let owner: Page;

    async function signedInPage(email: string, password: string, viewport = { width: 1280, height: 900 }) {
      const context = await chromium.newContext({
        viewport,
        ...(viewport.width < 500 ? { isMobile: true, hasTouch: true } : {}),
      });
      contexts.push(context);
      const page = await context.newPage();
      await signIn(page, base, email, password);
      return page;
    }

    /** What the management API answers the owner, for comparing with what the page shows. */
    async function apiAsOwner(method: 'PUT' | 'POST', url: string, body: unknown) {
      const reply = await app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      return { status: reply.statusCode, body: reply.json() as { code: string; message: string } };
    }

    const activeDeployOf = async (slug: string) =>
      (
        await p.ctx.db
          .selectFrom('projects')
          .select('active_deploy_id')
          .where('slug', '=', slug)
          .executeTakeFirstOrThrow()
      ).active_deploy_id;

    const row = (page: Page, messageId: string) => page.locator(`tr[data-message="${messageId}"]`);
    const waitForDelivered = (page: Page, messageId: string) =>
      row(page, messageId)
        .locator('[data-testid="delivery-status"]', { hasText: /^Delivered$/ })
        .waitFor(WAIT);

    before(async () => {
      p = await startPlatformContext(dialect, { WEBHOOK_TARGETS: 'private' });
      // The receiver checks signature timestamps against the platform's clock: keep it at now.
      p.clock.set(Date.now());
      const seeded = await seedTeam(p.ctx);
      teamId = seeded.team.id;
      await createUser(p.ctx, { email: 'member@x.test', password: 'member password 1' });
      await addMember(p.ctx, seeded.owner, teamId, 'member@x.test', 'member');
      ownerToken = (await createToken(p.ctx, seeded.owner, 'test')).token;
      await createProject(p.ctx, seeded.owner, {
        teamId,
        slug: 'billing',
        name: 'Billing',
        originUrl: 'https://billing.example.com',
      });
      receiver = await new WebhookReceiver(p.clock).start();
      worker = startWebhookWorker(p.ctx, {
        nodeId: 'node-a',
        pollMs: 60_000,
        onError: (error) => workerErrors.push(error),
      });
      p.webhookWake.listener = () => worker.wake();
      app = buildPlatformApp(p.ctx);
      await app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      chromium = await launchChromium();
    });

    after(async () => {
      for (const context of contexts) await context.close().catch(() => {});
      await chromium?.close();
      await worker?.stop();
      await receiver?.stop();
      await app?.close();
      await p?.close();
      assert.deepEqual(workerErrors, []);
    });

    it('creates a project from the form; the API’s messages show next to the field they are about', async () => {
      owner = await signedInPage('owner@x.test', 'owner password 1');
      await owner.getByRole('link', { name: 'New project' }).click();
      await owner.getByRole('heading', { level: 1, name: 'New project' }).waitFor(WAIT);
      assert.deepEqual(await accessibilityViolations(owner), []);
      await owner.getByLabel('Name').fill('Orders API');
      assert.equal(await owner.getByLabel('Slug').inputValue(), 'orders-api', 'the slug follows the name');
      assert.match(await laidOutText(owner.locator('#project-slug-hint')), /orders-api\.127\.0\.0\.1:\d+/);
      assert.equal(await owner.getByRole('combobox', { name: 'Team' }).inputValue(), String(teamId));

      // A slug the API refuses: its message, word for word, under the slug field.
      await owner.getByLabel('Slug').fill('Orders_API');
      await owner.getByLabel('Origin URL').fill('https://orders.example.com');
      const refusedSlug = await apiAsOwner('POST', '/api/v1/projects', {
        teamId,
        name: 'Orders API',
        slug: 'Orders_API',
        originUrl: 'https://orders.example.com',
      });
      assert.deepEqual([refusedSlug.status, refusedSlug.body.code], [400, 'validation_failed']);
      await owner.getByRole('button', { name: 'Create project' }).click();
      const slugError = owner.locator('#project-slug-error');
      await slugError.getByRole('alert').waitFor(WAIT);
      assert.equal(await laidOutText(slugError), `${refusedSlug.body.message} validation_failed`);
      assert.equal(await owner.getByLabel('Slug').getAttribute('aria-invalid'), 'true');
      assert.equal(await owner.getByLabel('Name').getAttribute('aria-invalid'), null);
      assert.equal(await laidOutText(owner.locator('#project-origin-error')), '');
      assert.equal(
        await owner.evaluate('document.activeElement.id'),
        'project-slug',
        'focus goes to the field',
      );
      assert.deepEqual(await accessibilityViolations(owner), []);

      // A slug another project has.
      await owner.getByLabel('Slug').fill('billing');
      await owner.getByRole('button', { name: 'Create project' }).click();
      await slugError.getByText('The slug "billing" is taken. Pick another one.').waitFor(WAIT);
      assert.equal(await laidOutText(slugError), 'The slug "billing" is taken. Pick another one. slug_taken');

      // An origin on the platform's own network: the address policy's message under the origin.
      await owner.getByLabel('Slug').fill('orders');
      await owner.getByLabel('Origin URL').fill('http://127.0.0.1:9');
      await owner.getByRole('button', { name: 'Create project' }).click();
      const originError = owner.locator('#project-origin-error');
      await originError.getByRole('alert').waitFor(WAIT);
      assert.match(
        await laidOutText(originError),
        /ask a platform admin to grant team "[^"]+" the origin http:\/\/127\.0\.0\.1:9\. origin_not_allowed$/,
      );
      assert.equal(await laidOutText(slugError), '', 'the slug error is gone');
      await owner.screenshot({ path: screenshotPath('new-project-1280'), fullPage: true });

      await owner.getByLabel('Origin URL').fill('https://orders.example.com');
      await owner.getByRole('button', { name: 'Create project' }).click();
      await owner.getByRole('heading', { level: 1, name: 'Orders API' }).waitFor(WAIT);
      assert.equal(new URL(owner.url()).pathname, '/projects/orders');
      const created = await p.ctx.db
        .selectFrom('projects')
        .select(['team_id', 'name', 'origin_url', 'active_deploy_id'])
        .where('slug', '=', 'orders')
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        { ...created },
        {
          team_id: teamId,
          name: 'Orders API',
          origin_url: 'https://orders.example.com',
          active_deploy_id: null,
        },
      );
      assert.equal(
        await p.ctx.db
          .selectFrom('projects')
          .select('slug')
          .where('slug', '=', 'Orders_API')
          .executeTakeFirst(),
        undefined,
      );
    });

    it('deploys a YAML file chosen in the file input: it is live and heads the history', async () => {
      await owner.getByRole('link', { name: 'Deploys' }).click();
      await owner.getByRole('heading', { level: 2, name: 'Deploy a document' }).waitFor(WAIT);
      await owner.getByText('No deploys yet').waitFor(WAIT);
      assert.deepEqual(await accessibilityViolations(owner), []);
      await owner.locator('input[type="file"]').setInputFiles({
        name: 'orders.yaml',
        mimeType: 'application/yaml',
        buffer: Buffer.from(VALID_YAML),
      });
      await owner.getByText('Loaded orders.yaml').waitFor(WAIT);
      assert.equal(await owner.getByLabel('OpenAPI document', { exact: true }).inputValue(), VALID_YAML);
      await owner.getByRole('button', { name: 'Deploy', exact: true }).click();
      const outcome = owner.locator('[data-testid="deploy-outcome"]');
      await outcome.filter({ hasText: /Deploy #\d+ is live/ }).waitFor(WAIT);
      const liveId = await activeDeployOf('orders');
      assert.ok(liveId !== null);
      assert.match(
        await laidOutText(outcome),
        new RegExp(`^Deploy #${liveId} is live Published at orders\\.`),
      );
      const rows = owner.locator('table.deploy-table tbody tr');
      assert.equal(await rows.count(), 1);
      assert.equal(await rows.first().getAttribute('data-deploy'), String(liveId));
      assert.equal(await rows.first().getAttribute('data-live'), 'true');
      assert.match(
        await laidOutText(rows.first()),
        /^#1 Live Succeeded, serving No changes .+ by owner@x\.test YAML, origin https:\/\/orders\.example\.com Document/,
      );
    });

    it('an invalid document lists the validator’s problems by path, and the live deploy stays', async () => {
      const liveBefore = await activeDeployOf('orders');
      const { problems } = await readOpenApiDocument(INVALID_YAML);
      assert.deepEqual(
        problems.map((problem) => [problem.pointer, problem.message]),
        [['/paths/~1orders~1{id}/get', 'The field "responses" is required here: add it.']],
      );
      // Dropped on the drop zone, as a file dragged from the desktop arrives.
      const dropped = await owner.evaluateHandle(`(() => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([${JSON.stringify(INVALID_YAML)}], 'orders-v2.yaml', { type: 'application/yaml' }));
        return transfer;
      })()`);
      await owner.locator('.dropzone').dispatchEvent('drop', { dataTransfer: dropped });
      await owner.getByText('Loaded orders-v2.yaml').waitFor(WAIT);
      assert.equal(await owner.getByLabel('OpenAPI document', { exact: true }).inputValue(), INVALID_YAML);
      await owner.getByRole('button', { name: 'Deploy', exact: true }).click();
      const outcome = owner.locator('[data-testid="deploy-outcome"]');
      await outcome.filter({ hasText: 'failed' }).waitFor(WAIT);
      const failed = await p.ctx.db
        .selectFrom('deploys')
        .select(['id', 'status', 'problems'])
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      assert.equal(failed.status, 'failed');
      assert.deepEqual(JSON.parse(String(failed.problems)), problems);
      assert.equal(
        await laidOutText(outcome.locator('.banner-title')),
        `Deploy #${failed.id} failed: the document is not valid`,
      );
      assert.match(
        await laidOutText(outcome),
        new RegExp(`Deploy #${liveBefore} stays live\\. Fix this problem`),
      );
      const items = outcome.locator('.problem-list li');
      assert.equal(await items.count(), 1);
      assert.equal(await laidOutText(items.first().locator('.problem-path')), 'paths › /orders/{id} › get');
      const [{ line, column }] = problems as unknown as [{ line: number; column: number }];
      assert.equal(
        await laidOutText(items.first().locator('.problem-position')),
        `line ${line}, column ${column}`,
      );
      assert.equal(
        await laidOutText(items.first().locator('.problem-message')),
        'The field "responses" is required here: add it.',
      );
      assert.equal(await activeDeployOf('orders'), liveBefore, 'the live deploy did not change');
      const rows = owner.locator('table.deploy-table tbody tr');
      assert.equal(await rows.count(), 2);
      assert.equal(
        await owner.locator('tr[data-live="true"]').getAttribute('data-deploy'),
        String(liveBefore),
      );
      const failedRow = owner.locator(`tr[data-deploy="${failed.id}"]`);
      assert.match(await laidOutText(failedRow), /Failed: not published 1 problem/);
      await failedRow.getByText('1 problem').click();
      assert.equal(
        await laidOutText(failedRow.locator('.problem-list li')),
        `paths › /orders/{id} › get line ${line}, column ${column} The field "responses" is required here: add it.`,
      );
      assert.deepEqual(await accessibilityViolations(owner), []);
      await owner.screenshot({ path: screenshotPath('deploys-1280'), fullPage: true });

      // Text that is not even YAML: the parser's message, shown as it is (no path).
      await owner.getByLabel('OpenAPI document', { exact: true }).fill('openapi: 3.0.3\ninfo: [\n');
      await owner.getByRole('button', { name: 'Deploy', exact: true }).click();
      await outcome.filter({ hasText: `Deploy #${failed.id + 1} failed` }).waitFor(WAIT);
      assert.match(
        await laidOutText(outcome.locator('.problem-list li')),
        /^The document is not valid YAML: /,
      );
      assert.equal(await activeDeployOf('orders'), liveBefore);
    });

    it('an owner sets the webhook (refused URLs show the API’s error), sees the secret once, tests, redelivers and rotates', async () => {
      // The team chip in the header opens the team's People tab; its Settings tab is next to it.
      await owner.getByRole('banner').getByRole('link', { name: /^Shop/ }).click();
      await owner.getByRole('heading', { level: 1, name: 'Shop' }).waitFor(WAIT);
      await owner
        .getByRole('navigation', { name: 'Team' })
        .getByRole('link', { name: 'Settings', exact: true })
        .click();
      await owner.getByLabel('Endpoint URL').waitFor(WAIT);
      assert.equal(await laidOutText(owner.locator('[data-testid="plan"]')), 'Pro');
      assert.match(
        await laidOutText(owner.locator('[data-testid="plan-who"]')),
        /set by a platform admin .* ask whoever runs this Kennel/,
      );
      assert.equal(
        await owner.getByRole('combobox', { name: 'Plan' }).count(),
        0,
        'no plan control for owners',
      );
      assert.deepEqual(await accessibilityViolations(owner), []);

      // A private address over plain HTTP: refused by the API, its message under the field.
      const refused = await apiAsOwner('PUT', `/api/v1/teams/${teamId}/webhook`, {
        url: 'http://10.0.0.5/hooks',
      });
      assert.deepEqual([refused.status, refused.body.code], [422, 'invalid_webhook_url']);
      await owner.getByLabel('Endpoint URL').fill('http://10.0.0.5/hooks');
      await owner.getByRole('button', { name: 'Save endpoint' }).click();
      const urlError = owner.locator('#webhook-url-error');
      await urlError.getByRole('alert').waitFor(WAIT);
      assert.equal(await laidOutText(urlError), `${refused.body.message} invalid_webhook_url`);
      assert.equal(
        await p.ctx.db.selectFrom('webhook_endpoints').select('url').executeTakeFirst(),
        undefined,
      );

      await owner.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      await owner.getByLabel('Endpoint URL').fill(receiver.url);
      await owner.getByRole('button', { name: 'Save endpoint' }).click();
      const secretBox = owner.locator('[data-testid="secret"]');
      await secretBox.waitFor(WAIT);
      const secret = await laidOutText(secretBox.locator('[data-testid="secret-value"]'));
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      receiver.secret = secret;
      assert.equal(await laidOutText(owner.locator('[data-testid="secret-hint"]')), `…${secret.slice(-4)}`);
      assert.equal(await laidOutText(owner.locator('[data-testid="webhook-url"]')), receiver.url);
      await secretBox.getByRole('button', { name: 'Copy' }).click();
      await secretBox.getByRole('button', { name: 'Copied' }).waitFor(WAIT);
      assert.equal(await owner.evaluate('navigator.clipboard.readText()'), secret);
      assert.deepEqual(await accessibilityViolations(owner), []);

      // Shown once: after a reload only the hint is left.
      await owner.reload();
      await owner.locator('[data-testid="secret-hint"]').waitFor(WAIT);
      assert.equal(await secretBox.count(), 0);
      assert.ok(!(await laidOutText(owner.locator('main'))).includes(secret.slice(6)));

      // A test event reaches the receiver, signed with that secret, and is listed as delivered.
      await owner.getByRole('button', { name: 'Send test event' }).click();
      await receiver.waitFor(1);
      assert.deepEqual(receiver.rejected, []);
      const test = receiver.received[0];
      assert.equal(test?.type, 'webhook.test');
      assert.deepEqual(test?.body.data, { team: { id: teamId, name: 'Shop' }, requestedBy: 'owner@x.test' });
      await waitForDelivered(owner, test.id);
      assert.equal(await laidOutText(row(owner, test.id).locator('[data-testid="delivery-attempts"]')), '1');
      assert.equal(
        await laidOutText(row(owner, test.id).locator('[data-testid="delivery-response"]')),
        'HTTP 204',
      );

      // Redeliver: the same message (same webhook-id) arrives again.
      await row(owner, test.id)
        .getByRole('button', { name: `Redeliver webhook.test ${test.id}` })
        .click();
      await receiver.waitFor(2);
      assert.equal(receiver.received[1]?.id, test.id);
      await waitForDelivered(owner, test.id);
      assert.equal(await owner.locator('table.delivery-table tbody tr').count(), 1);

      // A receiver answering 503: the attempt is listed with its status code, waiting for a retry
      // (the platform's clock stands still, so the retry 5 s later never comes by itself).
      receiver.status = 503;
      await owner.getByRole('button', { name: 'Send test event' }).click();
      const rows = owner.locator('table.delivery-table tbody tr');
      await rows.nth(1).waitFor(WAIT);
      const failing = { id: String(await rows.first().getAttribute('data-message')) };
      assert.notEqual(failing.id, test.id, 'the newest message is listed first');
      await row(owner, failing.id)
        .locator('[data-testid="delivery-status"]', { hasText: /^Retrying$/ })
        .waitFor(WAIT);
      assert.equal(
        await laidOutText(row(owner, failing.id).locator('[data-testid="delivery-response"]')),
        'HTTP 503',
      );
      assert.match(
        await laidOutText(row(owner, failing.id).locator('td[data-label="Status"]')),
        /^Retrying next try /,
      );
      const log = row(owner, failing.id).locator('details.attempt-log');
      await log.locator('summary').click();
      assert.match(await laidOutText(log.locator('li')), /^.+ HTTP 503 in \d+ ms: /);
      receiver.status = 204;
      await row(owner, failing.id)
        .getByRole('button', { name: /^Redeliver/ })
        .click();
      await receiver.waitFor(3);
      assert.equal(receiver.received[2]?.id, failing.id);
      await waitForDelivered(owner, failing.id);
      // The log keeps the failed attempt and adds the delivered one.
      await log.locator('summary').click();
      assert.deepEqual(
        (await log.locator('li').allInnerTexts()).map((t) => /HTTP (\d+)/.exec(t)?.[1]),
        ['503', '204'],
      );

      // Rotate, after confirming: a new secret, shown once, which signs from now on.
      await owner.getByRole('button', { name: 'Rotate secret…' }).click();
      const dialog = owner.getByRole('dialog', { name: 'Rotate the signing secret?' });
      await dialog.waitFor(WAIT);
      assert.deepEqual(await accessibilityViolations(owner), []);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached', ...WAIT });
      assert.equal(await secretBox.count(), 0, 'cancelled: nothing rotated');
      await owner.getByRole('button', { name: 'Rotate secret…' }).click();
      await dialog.getByRole('button', { name: 'Rotate secret' }).click();
      await secretBox.waitFor(WAIT);
      const rotated = await laidOutText(secretBox.locator('[data-testid="secret-value"]'));
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, secret);
      assert.equal(await laidOutText(owner.locator('[data-testid="secret-hint"]')), `…${rotated.slice(-4)}`);
      receiver.secret = rotated;
      await owner.getByRole('button', { name: 'Send test event' }).click();
      await receiver.waitFor(4);
      assert.deepEqual(receiver.rejected, [], 'signed with the new secret');
      await waitForDelivered(owner, receiver.received[3]?.id as string);
      assert.equal(await owner.locator('table.delivery-table tbody tr').count(), 3);
      assert.deepEqual(await accessibilityViolations(owner), []);
      await owner.screenshot({ path: screenshotPath('team-settings-1280'), fullPage: true });
    });

    it('a member sees the plan and whom to ask, and none of the owner’s webhook actions', async () => {
      const member = await signedInPage('member@x.test', 'member password 1');
      // The team chip in the header opens the team's People tab; its Settings tab is next to it.
      await member.getByRole('banner').getByRole('link', { name: /^Shop/ }).click();
      await member.getByRole('heading', { level: 1, name: 'Shop' }).waitFor(WAIT);
      await member
        .getByRole('navigation', { name: 'Team' })
        .getByRole('link', { name: 'Settings', exact: true })
        .click();
      assert.equal(await laidOutText(member.locator('[data-testid="plan"]')), 'Pro');
      assert.match(
        await laidOutText(member.locator('[data-testid="plan-who"]')),
        /ask a team owner — owner@x\.test — to arrange it/,
      );
      assert.match(
        await laidOutText(member.locator('[data-testid="webhook-owners-only"]')),
        /The team’s owners manage its webhook.*Ask owner@x\.test/,
      );
      for (const control of [
        member.getByLabel('Endpoint URL'),
        member.getByRole('combobox', { name: 'Plan' }),
        member.getByRole('button', { name: /Send test event|Rotate|Redeliver|Remove endpoint|Change plan/ }),
      ]) {
        assert.equal(await control.count(), 0);
      }
      assert.ok(
        !(await laidOutText(member.locator('main'))).includes(receiver.url),
        'the URL is not shown to members',
      );
      assert.deepEqual(await accessibilityViolations(member), []);
    });

    it('a platform admin changes the plan from the page; the API refuses the owner', async () => {
      const admin = await signedInPage('admin@x.test', 'admin password 1');
      await admin.goto(`${base}/teams/${teamId}/settings`);
      const plan = admin.getByRole('combobox', { name: 'Plan' });
      await plan.waitFor(WAIT);
      assert.deepEqual(
        await plan
          .locator('option')
          .evaluateAll((options) => options.map((o) => (o as { value: string }).value)),
        PLAN_NAMES,
      );
      assert.equal(await plan.inputValue(), 'pro');
      assert.deepEqual(await accessibilityViolations(admin), []);
      await plan.selectOption('enterprise');
      await admin.getByRole('button', { name: 'Change plan' }).click();
      await admin.getByText('Plan changed to Enterprise.').waitFor(WAIT);
      assert.equal(await laidOutText(admin.locator('[data-testid="plan"]')), 'Enterprise');
      assert.match(
        await laidOutText(admin.locator('header.topbar')),
        /Shop\s*enterprise/i,
        'the header follows',
      );
      const stored = await p.ctx.db
        .selectFrom('teams')
        .select('plan')
        .where('id', '=', teamId)
        .executeTakeFirstOrThrow();
      assert.equal(stored.plan, 'enterprise');

      // The owner's page offers no control, and the API refuses the owner's session as well.
      const answer = (await owner.evaluate(`(async () => {
        const me = await (await fetch('/api/v1/me')).json();
        const r = await fetch('/api/v1/teams/${teamId}/plan', {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrfToken },
          body: JSON.stringify({ plan: 'free' }),
        });
        return [r.status, (await r.json()).code];
      })()`)) as [number, string];
      assert.deepEqual(answer, [403, 'forbidden']);
      assert.equal(
        (await p.ctx.db.selectFrom('teams').select('plan').where('id', '=', teamId).executeTakeFirstOrThrow())
          .plan,
        'enterprise',
      );
    });

    it('fits a 390 px phone without sideways scrolling, axe clean, on each new page', async () => {
      const phone = await signedInPage('owner@x.test', 'owner password 1', { width: 390, height: 844 });
      const pages = [
        { path: '/new', ready: phone.getByLabel('Origin URL'), name: 'new-project' },
        { path: '/projects/orders/deploys', ready: phone.locator('table.deploy-table'), name: 'deploys' },
        {
          path: `/teams/${teamId}/settings`,
          ready: phone.locator('table.delivery-table'),
          name: 'team-settings',
        },
      ];
      for (const { path, ready, name } of pages) {
        await phone.goto(`${base}${path}`);
        await ready.waitFor(WAIT);
        if (name === 'deploys') await phone.locator('details.problems-details summary').first().click();
        assert.ok((await overflow(phone)) <= 0, `${path} scrolls sideways by ${await overflow(phone)} px`);
        assert.deepEqual(await accessibilityViolations(phone), [], path);
        await phone.screenshot({ path: screenshotPath(`${name}-390`), fullPage: true });
      }
    });
  });
}
