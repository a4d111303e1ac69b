import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import {
  createTestStorage,
  TEST_POSTGRES_URL,
  type TestStorage,
  testDialects,
} from '../support/databases.ts';
import { type RunningProcess, startProcess, storageEnv } from '../support/processes.ts';

/** The admin key both processes register at start (the same key id on both). */
const ADMIN_KEY = `pk_${'r'.repeat(43)}`;
const PER_KEY = 200;
const PER_ADDRESS = 100;
/** An hour: a hammering of a few seconds stays inside one window (waited for below). */
const WINDOW_SECONDS = 3600;
const CONCURRENCY = 16;

interface Tally {
  /** Accepted answers per node. */
  accepted: [number, number];
  refused: { status: number; headers: Headers; body: unknown }[];
  /** `r` of every accepted answer. */
  remaining: number[];
}

/**
 * Sends `total` requests to two nodes in turn, `CONCURRENCY` at a time, and sorts the answers.
 * Anything but 200 or 429 fails the test.
 */
async function hammer(urls: [string, string], path: string, total: number, key?: string): Promise<Tally> {
  const tally: Tally = { accepted: [0, 0], refused: [], remaining: [] };
  let sent = 0;
  const worker = async () => {
    while (sent < total) {
      const n = sent++;
      const node = (n % 2) as 0 | 1;
      const response = await fetch(`${urls[node]}${path}`, {
        headers: key ? { authorization: `Bearer ${key}` } : {},
      });
      const body: unknown = await response.json();
      if (response.status === 200) {
        tally.accepted[node]++;
        const r = /;r=(\d+);/.exec(response.headers.get('ratelimit') ?? '')?.[1];
        tally.remaining.push(Number(r));
      } else if (response.status === 429) {
        tally.refused.push({ status: response.status, headers: response.headers, body });
      } else {
        assert.fail(`${path} on node ${node}: ${response.status} ${JSON.stringify(body)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return tally;
}

/** Every refusal is the documented 429: Error body, Retry-After = the RateLimit reset, r=0. */
function assertRefusals(tally: Tally, policy: 'key' | 'address', quota: number): void {
  for (const refusal of tally.refused) {
    const retryAfter = Number(refusal.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW_SECONDS);
    assert.equal(refusal.headers.get('ratelimit-policy'), `"${policy}";q=${quota};w=${WINDOW_SECONDS}`);
    assert.equal(refusal.headers.get('ratelimit'), `"${policy}";r=0;t=${retryAfter}`);
    const who = policy === 'key' ? 'API key' : 'client address';
    assert.deepEqual(refusal.body, {
      code: 'rate_limited',
      message: `Too many requests: this ${who} may send ${quota} per ${WINDOW_SECONDS} s. Try again in ${retryAfter} s.`,
      status: 429,
    });
  }
}

/** Waits, if need be, until the current window has a minute left (both nodes read this clock). */
async function awayFromWindowEnd(): Promise<void> {
  const windowMs = WINDOW_SECONDS * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < 60_000) await sleep(left + 100);
}

async function startNodes(
  storage: TestStorage,
  scope: 'auto' | 'node',
): Promise<[RunningProcess, RunningProcess]> {
  const env = {
    ...storageEnv(storage.location),
    PETSTORE_ADMIN_KEY: ADMIN_KEY,
    PETSTORE_RATE_LIMIT_PER_KEY: String(PER_KEY),
    PETSTORE_RATE_LIMIT_PER_ADDRESS: String(PER_ADDRESS),
    PETSTORE_RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    PETSTORE_RATE_LIMIT_SCOPE: scope,
  };
  // One after the other: the first migrates, the second finds the schema ready.
  const a = await startProcess('petstore.ts', env);
  const b = await startProcess('petstore.ts', env);
  return [a, b];
}

/**
 * Two Petstore processes on one PostgreSQL database, one key (and then one client address)
 * hammered through both. The cluster policy, the default on PostgreSQL, accepts exactly the
 * quota across both (its stated tolerance is 0 while the database answers, and every request
 * the nodes were granted is used when both keep receiving) and refuses the rest with the
 * documented 429. The same hammering of two processes counting alone (PETSTORE_RATE_LIMIT_SCOPE=
 * node, the policy every process had before) accepts twice the quota: the assertion above fails
 * on it.
 */
describe('rate limits on two nodes sharing PostgreSQL (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let storage: TestStorage;
  let nodes: RunningProcess[] = [];
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });

  before(async () => {
    storage = await createTestStorage('postgres');
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop('SIGKILL')));
    await storage?.drop();
    await admin.end();
  });

  /** The shared count's rows, as PostgreSQL holds them. */
  async function sharedCounts(): Promise<{ policy: string; caller: string; claimed: number }[]> {
    assert.ok(storage.location.kind === 'postgres');
    const { rows } = await admin.query(
      `SELECT policy, caller, claimed FROM "${storage.location.schema}".petstore_rate_limits ORDER BY policy`,
    );
    return rows;
  }

  it('one key through both nodes: exactly the quota accepted, the rest 429', async () => {
    const [a, b] = await startNodes(storage, 'auto');
    nodes = [a, b];
    await awayFromWindowEnd();
    const tally = await hammer([a.url, b.url], '/store/inventory', 3 * PER_KEY, ADMIN_KEY);
    const accepted = tally.accepted[0] + tally.accepted[1];
    assert.equal(accepted, PER_KEY, `accepted ${tally.accepted.join(' + ')}`);
    assert.ok(tally.accepted[0] > 0 && tally.accepted[1] > 0, 'both nodes accepted some');
    assert.equal(tally.refused.length, 2 * PER_KEY);
    assertRefusals(tally, 'key', PER_KEY);
    assert.ok(tally.remaining.every((r) => r >= 0 && r < PER_KEY));
    assert.deepEqual(await sharedCounts(), [{ policy: 'key', caller: '1', claimed: PER_KEY }]);
  });

  it('one client address without a key through both nodes: exactly the quota accepted', async () => {
    const [a, b] = nodes as [RunningProcess, RunningProcess];
    await awayFromWindowEnd();
    const tally = await hammer([a.url, b.url], '/pets', 3 * PER_ADDRESS);
    assert.equal(
      tally.accepted[0] + tally.accepted[1],
      PER_ADDRESS,
      `accepted ${tally.accepted.join(' + ')}`,
    );
    assert.ok(tally.accepted[0] > 0 && tally.accepted[1] > 0, 'both nodes accepted some');
    assert.equal(tally.refused.length, 2 * PER_ADDRESS);
    assertRefusals(tally, 'address', PER_ADDRESS);
    assert.deepEqual(
      (await sharedCounts()).find((row) => row.policy === 'address'),
      { policy: 'address', caller: '127.0.0.1', claimed: PER_ADDRESS },
    );
  });

  it('control: two nodes counting alone (the per-process policy) accept twice the quota', async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    const [a, b] = await startNodes(storage, 'node');
    nodes = [a, b];
    await awayFromWindowEnd();
    const tally = await hammer([a.url, b.url], '/store/inventory', 3 * PER_KEY, ADMIN_KEY);
    assert.deepEqual(tally.accepted, [PER_KEY, PER_KEY]);
    assertRefusals(tally, 'key', PER_KEY);
  });
});
