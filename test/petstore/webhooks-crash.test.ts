import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/lib/clock.ts';
import { createTestStorage, type TestStorage, testDialects } from '../support/databases.ts';
import { callPetstore } from '../support/petstore.ts';
import { type RunningProcess, startProcess, storageEnv } from '../support/processes.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * The outbox across a crash: changes committed while the receiver is down, the Petstore killed
 * with SIGKILL before it could deliver them, restarted, the receiver back → every event arrives,
 * signed. Real processes, real time (the first retry is 5 s after the failed attempt).
 */

const ADMIN_KEY = `pk_${'w'.repeat(43)}`;

function env(location: Parameters<typeof storageEnv>[0]): Record<string, string> {
  return {
    ...storageEnv(location),
    PETSTORE_ADMIN_KEY: ADMIN_KEY,
    PETSTORE_RATE_LIMIT_PER_KEY: '100000000',
    PETSTORE_WEBHOOK_TARGETS: 'private',
    PETSTORE_SECRET_KEYS: `crash:${Buffer.alloc(32, 3).toString('base64')}`,
    PETSTORE_WEBHOOK_TIMEOUT_MS: '2000',
  };
}

/** A call to the Petstore process at `base` with the admin key. */
const call = <T>(base: string, method: string, path: string, body?: unknown) =>
  callPetstore<T>(base, ADMIN_KEY, method, path, body);

for (const dialect of testDialects()) {
  describe(`Petstore webhooks across SIGKILL (${dialect})`, () => {
    let storage: TestStorage;
    let server: RunningProcess | undefined;
    const receiver = new WebhookReceiver(systemClock);
    before(async () => {
      storage = await createTestStorage(dialect);
      await receiver.start();
    });
    after(async () => {
      await server?.stop('SIGKILL');
      await receiver.stop();
      await storage.drop();
    });

    it('delivers after restart what was committed before the kill', async () => {
      server = await startProcess('petstore.ts', env(storage.location));
      const created = await call<{ id: number; secret: string }>(server.url, 'POST', '/webhooks', {
        url: receiver.url,
        eventTypes: ['category.*', 'pet.created'],
      });
      assert.equal(created.status, 201);
      receiver.secret = created.body.secret;
      await receiver.stop();

      const category = await call<{ id: number }>(server.url, 'POST', '/categories', { name: 'Survivors' });
      const pet = await call<{ id: number }>(server.url, 'POST', '/pets', {
        name: 'Phoenix',
        categoryId: category.body.id,
      });
      // Refused: nothing to deliver for it, before or after the crash.
      assert.equal(
        (await call(server.url, 'POST', '/pets', { name: 'Nobody', categoryId: 999 })).status,
        422,
      );
      // Killed once the first attempts (receiver down) are recorded and the retries are 5 s away:
      // a kill during an attempt would leave its lease to run out first (2 min), which is the
      // outbox's contract but too slow for a test.
      const deadline = Date.now() + 15_000;
      for (;;) {
        const log = await call<{ attempts: number }[]>(
          server.url,
          'GET',
          `/webhooks/${created.body.id}/deliveries`,
        );
        if (log.body.length === 2 && log.body.every((d) => d.attempts >= 1)) break;
        assert.ok(Date.now() < deadline, `the first attempts were not made: ${JSON.stringify(log.body)}`);
        await new Promise((done) => setTimeout(done, 50));
      }
      server.child.kill('SIGKILL');
      await server.stop('SIGKILL');

      await receiver.start();
      server = await startProcess('petstore.ts', env(storage.location));
      await Promise.race([
        receiver.waitFor(2),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error(`not delivered in 30 s:\n${server?.output()}`)), 30_000).unref(),
        ),
      ]);
      assert.deepEqual(receiver.rejected, []);
      assert.deepEqual(
        receiver.received
          .map((r) => ({ type: r.type, data: r.body.data }))
          .sort((a, b) => a.type.localeCompare(b.type)),
        [
          { type: 'category.created', data: { id: category.body.id, name: 'Survivors' } },
          {
            type: 'pet.created',
            data: { id: pet.body.id, name: 'Phoenix', categoryId: category.body.id, status: 'available' },
          },
        ],
      );
      // The receiver counts a webhook before the worker records the answer: wait for the record.
      const recorded = Date.now() + 10_000;
      let log: [string, string][] = [];
      do {
        const answer = await call<{ state: string; type: string }[]>(
          server.url,
          'GET',
          `/webhooks/${created.body.id}/deliveries`,
        );
        log = answer.body.map((d) => [d.type, d.state]);
        if (log.every(([, state]) => state === 'delivered')) break;
        await new Promise((done) => setTimeout(done, 50));
      } while (Date.now() < recorded);
      assert.deepEqual(log, [
        ['pet.created', 'delivered'],
        ['category.created', 'delivered'],
      ]);
    });
  });
}
