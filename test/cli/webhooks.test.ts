import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addMember, createTeam } from '../../src/platform/accounts/teams.ts';
import { authenticate } from '../../src/platform/accounts/users.ts';
import { startWebhookWorker } from '../../src/platform/webhooks/index.ts';
import { cliUser, show } from '../support/cli-setup.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { type CliServer, startCliServer, USERS } from './harness.ts';

// The CLI talks HTTP only, so one database is enough here; test/platform/webhooks.test.ts runs both.
describe('kennel webhooks', () => {
  let server: CliServer;
  let receiver: WebhookReceiver;
  let teamId = 0;
  const owner = cliUser(() => server.url);
  const member = cliUser(() => server.url);

  before(async () => {
    server = await startCliServer('sqlite', { WEBHOOK_TARGETS: 'private' });
    const ctx = server.platform.ctx;
    const ownerActor = await authenticate(ctx, USERS.owner.email, USERS.owner.password);
    teamId = (await createTeam(ctx, ownerActor, 'Shop')).id;
    await addMember(ctx, ownerActor, teamId, USERS.member.email, 'member');
    receiver = await new WebhookReceiver(server.platform.clock).start();
    await owner.login(USERS.owner);
    await member.login(USERS.member);
  });
  after(async () => {
    await receiver?.stop();
    await server?.close();
  });

  it('sets the endpoint, printing the secret once; show never prints it', async () => {
    const bad = await owner.run(['webhooks', 'set', String(teamId), 'http://hooks.example.test/x']);
    assert.equal(bad.code, 1, show(bad));
    assert.match(bad.stderr, /must use https:\/\/.*\(invalid_webhook_url\)$/m);
    const set = await owner.run(['webhooks', 'set', String(teamId), receiver.url]);
    assert.equal(set.code, 0, show(set));
    const secret = /Signing secret \(shown this once; store it with your receiver\): (whsec_\S+)$/m.exec(
      set.stdout,
    )?.[1];
    assert.ok(secret, set.stdout);
    receiver.secret = secret;
    const again = await owner.run(['webhooks', 'set', String(teamId), receiver.url, '--json']);
    assert.equal((JSON.parse(again.stdout) as { secret: unknown }).secret, null);
    const shown = await owner.run(['webhooks', 'show', String(teamId)]);
    assert.equal(shown.code, 0, show(shown));
    assert.match(shown.stdout, new RegExp(`^URL: +${receiver.url.replaceAll('.', '\\.')}$`, 'm'));
    assert.match(shown.stdout, new RegExp(`^Secret: +…${secret.slice(-4).replace(/[+/]/g, '\\$&')} `, 'm'));
    assert.ok(!shown.stdout.includes(secret));
  });

  it('keeps members out (exit 1, forbidden) and checks arguments (exit 2)', async () => {
    const refused = await member.run(['webhooks', 'show', String(teamId)]);
    assert.equal(refused.code, 1, show(refused));
    assert.match(refused.stderr, /\(forbidden\)$/m);
    const badTeam = await owner.run(['webhooks', 'show', 'three']);
    assert.equal(badTeam.code, 2, show(badTeam));
    const badId = await owner.run(['webhooks', 'redeliver', String(teamId), 'nope']);
    assert.equal(badId.code, 2, show(badId));
    assert.match(badId.stderr, /MESSAGE_ID must look like msg_/);
    const badLimit = await owner.run(['webhooks', 'deliveries', String(teamId), '--limit', '0']);
    assert.equal(badLimit.code, 2, show(badLimit));
  });

  it('sends a test event, lists it as delivered, and redelivers it', async () => {
    const worker = startWebhookWorker(server.platform.ctx, {
      nodeId: 'cli',
      start: false,
      onError: () => {},
    });
    try {
      const sent = await owner.run(['webhooks', 'test', String(teamId), '--json']);
      assert.equal(sent.code, 0, show(sent));
      const id = (JSON.parse(sent.stdout) as { id: string }).id;
      await worker.runOnce();
      assert.deepEqual(
        receiver.received.map((r) => [r.id, r.type]),
        [[id, 'webhook.test']],
      );
      assert.deepEqual(receiver.rejected, []);
      const list = await owner.run(['webhooks', 'deliveries', String(teamId)]);
      assert.match(list.stdout, /^Message\s+Event\s+Created\s+Attempts\s+Outcome$/m);
      assert.match(list.stdout, new RegExp(`^${id}\\s+webhook\\.test\\s+\\S+\\s+1\\s+delivered `, 'm'));
      const again = await owner.run(['webhooks', 'redeliver', String(teamId), id]);
      assert.equal(again.code, 0, show(again));
      assert.match(again.stdout, new RegExp(`^${id} \\(webhook\\.test\\) is queued again\\.$`, 'm'));
      await worker.runOnce();
      assert.equal(receiver.received.length, 2);
      const removed = await owner.run(['webhooks', 'remove', String(teamId)]);
      assert.equal(removed.code, 0, show(removed));
      const gone = await owner.run(['webhooks', 'show', String(teamId)]);
      assert.equal(gone.code, 1, show(gone));
      assert.match(gone.stderr, /\(webhook_not_found\)$/m);
    } finally {
      await worker.stop();
    }
  });
});
