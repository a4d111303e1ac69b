import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { LifecycleRules } from '../../src/edge/lifecycle.ts';
import {
  CallerIdentity,
  credentialSources,
  queryNames,
  TrafficRecorder,
  truncateAddress,
} from '../../src/edge/traffic/index.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { LatencySketch } from '../../src/lib/latency-sketch.ts';
import type {
  CallerCounts,
  MinuteCounts,
  RequestLogEntry,
  TrafficWriter,
} from '../../src/platform/traffic/index.ts';

/** A writer that keeps each batch it is given (the database side has its own end-to-end test). */
function keptBatches() {
  const counts: { minutes: MinuteCounts[]; callers: CallerCounts[] }[] = [];
  const logs: { entries: RequestLogEntry[]; keep: number }[] = [];
  let failNext = false;
  const writer: TrafficWriter = {
    async writeCounts(batch) {
      if (failNext) {
        failNext = false;
        throw new Error('database down');
      }
      counts.push({ minutes: [...batch.minutes], callers: [...batch.callers] });
    },
    async writeLogs(entries, keep) {
      logs.push({ entries: [...entries], keep });
    },
  };
  return { writer, counts, logs, failOnce: () => (failNext = true) };
}

const request = (over: Partial<Parameters<TrafficRecorder['record']>[0]> = {}) => ({
  projectId: 1,
  operation: 'GET /pets',
  method: 'GET',
  path: '/api/pets',
  status: 200,
  latencyMs: 10,
  bytesIn: 0,
  bytesOut: 100,
  caller: { caller: 'c'.repeat(32), label: 'key:abc…', kind: 'key' as const },
  requestId: 'r',
  ...over,
});

const fakeRequest = (headers: Record<string, string>, remoteAddress = '198.51.100.23') =>
  ({ headers, socket: { remoteAddress } }) as unknown as IncomingMessage;

describe('traffic attribution: one matcher per deploy', () => {
  const rules = LifecycleRules.from(
    {
      paths: {
        '/pets': { get: {}, post: {} },
        '/pets/{petId}': { get: {}, delete: {} },
        '/pets/mine': { get: {} },
        '/v{version}/status': { get: {} },
      },
    },
    new Date('2026-01-01T00:00:00Z'),
  );
  const table: [string, string, string | undefined][] = [
    ['GET', '/pets', 'GET /pets'],
    ['POST', '/pets', 'POST /pets'],
    ['GET', '/pets/7', 'GET /pets/{petId}'],
    ['DELETE', '/pets/7', 'DELETE /pets/{petId}'],
    ['GET', '/pets/mine', 'GET /pets/mine'],
    ['HEAD', '/pets/7', 'GET /pets/{petId}'],
    ['GET', '/v2/status', 'GET /v{version}/status'],
    ['PUT', '/pets', undefined],
    ['GET', '/cats', undefined],
    ['GET', '/pets/7/toys', undefined],
  ];
  for (const [method, path, key] of table) {
    it(`${method} ${path} → ${key ?? 'unmatched'}`, () => {
      assert.equal(rules.find(method, path)?.operation.key, key);
    });
  }
});

describe('caller identity', () => {
  const identity = new CallerIdentity(Buffer.alloc(32, 7));
  const sources = credentialSources({
    components: {
      securitySchemes: {
        key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        query: { type: 'apiKey', in: 'query', name: 'api_key' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'sid' },
        token: { type: 'http', scheme: 'Bearer' },
        login: { type: 'http', scheme: 'basic' },
        oauth: { type: 'oauth2', flows: {} },
      },
    },
  });

  it('reads the places the document declares, in its order', () => {
    assert.deepEqual(sources, [
      { in: 'header', name: 'x-api-key' },
      { in: 'query', name: 'api_key' },
      { in: 'cookie', name: 'sid' },
      { in: 'bearer' },
      { in: 'basic' },
    ]);
    assert.deepEqual(credentialSources({ securityDefinitions: { b: { type: 'basic' } } }), [{ in: 'basic' }]);
  });

  it('an API key: a keyed hash and at most 6 of its characters', () => {
    const found = identity.identify(
      1,
      fakeRequest({ 'x-api-key': 'sk_live_abcdef123456' }),
      '/api/pets',
      sources,
    );
    assert.equal(found.kind, 'key');
    assert.equal(found.label, 'key:sk_liv…');
    assert.match(found.caller, /^[0-9a-f]{32}$/);
    assert.equal(
      found.caller,
      identity.identify(1, fakeRequest({ 'x-api-key': 'sk_live_abcdef123456' }), '/', sources).caller,
    );
    // Another project, another key, or another traffic key: another caller.
    assert.notEqual(
      found.caller,
      identity.identify(2, fakeRequest({ 'x-api-key': 'sk_live_abcdef123456' }), '/', sources).caller,
    );
    assert.notEqual(
      found.caller,
      identity.identify(1, fakeRequest({ 'x-api-key': 'sk_live_abcdef123457' }), '/', sources).caller,
    );
    assert.notEqual(
      found.caller,
      new CallerIdentity(Buffer.alloc(32, 8)).identify(
        1,
        fakeRequest({ 'x-api-key': 'sk_live_abcdef123456' }),
        '/',
        sources,
      ).caller,
    );
    // A short key shows a third of itself at most.
    assert.equal(
      identity.identify(1, fakeRequest({ 'x-api-key': 'abcdefg' }), '/', sources).label,
      'key:ab…',
    );
  });

  it('a key in the query or a cookie', () => {
    assert.equal(
      identity.identify(1, fakeRequest({}), '/api/pets?limit=1&api_key=qk_0123456789abcdef', sources).label,
      'key:qk_012…',
    );
    assert.equal(
      identity.identify(1, fakeRequest({ cookie: 'a=1; sid=cookie-value-xyz-123' }), '/', sources).label,
      'key:cookie…',
    );
  });

  it('bearer and basic: basic labelled by part of the user name, hashed whole', () => {
    const bearer = identity.identify(
      1,
      fakeRequest({ authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.payload' }),
      '/',
      sources,
    );
    assert.equal(bearer.label, 'bearer:eyJhbG…');
    const basic = (user: string, password: string) =>
      identity.identify(
        1,
        fakeRequest({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` }),
        '/',
        sources,
      );
    assert.equal(basic('alice-the-caller', 'secret').label, 'basic:alice…');
    assert.notEqual(basic('alice-the-caller', 'secret').caller, basic('alice-the-caller', 'other').caller);
  });

  it('no credential sent, or none declared: the client network, /24 or /48', () => {
    const none = identity.identify(1, fakeRequest({}, '203.0.113.77'), '/', sources);
    assert.deepEqual([none.kind, none.label], ['address', '203.0.113.0/24']);
    assert.equal(none.caller, identity.identify(1, fakeRequest({}, '203.0.113.5'), '/', []).caller);
    assert.equal(
      identity.identify(1, fakeRequest({ 'x-api-key': 'k' }, '::ffff:10.1.2.3'), '/', []).label,
      '10.1.2.0/24',
    );
  });

  it('a returning caller costs no hash: remembered per project and place, forgotten all at once past 10,000', () => {
    const counting = new CallerIdentity(Buffer.alloc(32, 9));
    let hashes = 0;
    const hash = counting.hash.bind(counting);
    counting.hash = (projectId, text) => {
      hashes += 1;
      return hash(projectId, text);
    };
    const key = (value: string, address = '198.51.100.23') => fakeRequest({ 'x-api-key': value }, address);
    const first = counting.identify(1, key('sk_live_abcdef123456'), '/', sources);
    assert.equal(hashes, 1);
    assert.equal(
      counting.identify(1, key('sk_live_abcdef123456'), '/', sources),
      first,
      'the same caller object',
    );
    assert.equal(hashes, 1);
    // The same text as another project's key, or as a cookie: hashed apart.
    assert.notEqual(counting.identify(2, key('sk_live_abcdef123456'), '/', sources).caller, first.caller);
    const cookie = counting.identify(1, fakeRequest({ cookie: 'sid=sk_live_abcdef123456' }), '/', sources);
    assert.equal(cookie.caller, first.caller, 'one credential is one caller wherever it is sent');
    assert.equal(hashes, 3);
    const byAddress = counting.identify(1, fakeRequest({}, '198.51.100.23'), '/', []);
    assert.equal(counting.identify(1, fakeRequest({}, '198.51.100.23'), '/', []), byAddress);
    assert.equal(byAddress.kind, 'address');
    assert.equal(hashes, 4);
    for (let i = 0; i < 10_000; i++) counting.identify(1, key(`flood-${i}-0123456789`), '/', sources);
    assert.equal(hashes, 10_004);
    assert.deepEqual(counting.identify(1, key('sk_live_abcdef123456'), '/', sources), first);
    assert.equal(hashes, 10_005, 'forgotten after the flood: hashed again, to the same caller');
  });

  const addresses: [string, string][] = [
    ['203.0.113.77', '203.0.113.0/24'],
    ['::ffff:192.0.2.200', '192.0.2.0/24'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1::/48'],
    ['2001:0db8:0001::1', '2001:db8:1::/48'],
    ['2001:db8::1', '2001:db8::/48'],
    ['::1', '::/48'],
    ['fe80::1%eth0', 'fe80::/48'],
    ['2001:db8:abcd:12::192.0.2.1', '2001:db8:abcd::/48'],
    ['not an address', 'unknown'],
  ];
  for (const [address, network] of addresses) {
    it(`truncates ${address} to ${network}`, () => assert.equal(truncateAddress(address), network));
  }

  it('keeps query names, never values', () => {
    assert.equal(queryNames('/api/pets?limit=5&status=sold&flag'), '?limit=&status=&flag=');
    assert.equal(queryNames('/api/pets'), '');
    assert.equal(queryNames('/api/pets?'), '');
  });
});

describe('TrafficRecorder', () => {
  const limits = { maxCallers: 100, maxOperations: 100, logSize: 10 };

  it('N requests → one write of one row per series, counts and sketches exact', async () => {
    const clock = new ManualClock('2026-11-27T04:21:30Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({ clock, writer: kept.writer, limits });
    for (let i = 1; i <= 1000; i++)
      recorder.record(request({ latencyMs: i, status: i % 10 === 0 ? 503 : 200, bytesIn: 1 }));
    await recorder.flushCounts();
    assert.equal(kept.counts.length, 1);
    const [batch] = kept.counts;
    assert.deepEqual(
      batch?.minutes.map((m) => [
        m.operation,
        m.status,
        m.minute,
        m.requests,
        m.errors,
        m.bytesIn,
        m.bytesOut,
      ]),
      [
        ['GET /pets', 200, '2026-11-27T04:21:00.000Z', 900, 0, 900, 90_000],
        ['GET /pets', 503, '2026-11-27T04:21:00.000Z', 100, 100, 100, 10_000],
      ],
    );
    const sketch = LatencySketch.fromJSON(batch?.minutes[0]?.latency as string);
    assert.equal(sketch.count, 900);
    assert.deepEqual(
      batch?.callers.map((c) => [c.caller, c.operation, c.day, c.requests, c.errors, c.lastSeenAt]),
      [['c'.repeat(32), 'GET /pets', '2026-11-27', 1000, 100, '2026-11-27T04:21:30.000Z']],
    );
    // Nothing new: nothing written.
    await recorder.flushCounts();
    assert.equal(kept.counts.length, 1);
  });

  it('a minute written and let go is counted afresh when the clock comes back to it', async () => {
    const clock = new ManualClock('2026-11-27T04:21:30Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({ clock, writer: kept.writer, limits });
    recorder.record(request());
    recorder.record(request());
    clock.set('2026-11-27T04:22:30Z');
    await recorder.flushCounts();
    assert.equal(recorder.seriesCount, 0, 'the written minute is over and let go');
    clock.set('2026-11-27T04:21:40Z');
    recorder.record(request());
    await recorder.flushCounts();
    const rows = (batch: number) =>
      kept.counts[batch]?.minutes.map((m) => [m.operation, m.minute, m.requests]);
    assert.deepEqual(rows(0), [['GET /pets', '2026-11-27T04:21:00.000Z', 2]]);
    assert.deepEqual(rows(1), [['GET /pets', '2026-11-27T04:21:00.000Z', 1]]);
  });

  it('a minute is written with its running totals (the node overwrites its own row), then forgotten', async () => {
    const clock = new ManualClock('2026-11-27T04:21:10Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({ clock, writer: kept.writer, limits });
    recorder.record(request());
    await recorder.flushCounts();
    clock.advance(10_000);
    recorder.record(request());
    await recorder.flushCounts();
    assert.deepEqual(
      kept.counts.map((b) => b.minutes.map((m) => m.requests)),
      [[1], [2]],
    );
    assert.deepEqual(
      kept.counts.map((b) => b.callers.map((c) => c.requests)),
      [[1], [1]],
    );
    clock.advance(60_000);
    recorder.record(request());
    await recorder.flushCounts();
    assert.deepEqual(
      kept.counts[2]?.minutes.map((m) => [m.minute, m.requests]),
      [['2026-11-27T04:22:00.000Z', 1]],
    );
    assert.equal(recorder.seriesCount, 1, 'the minute that is over and written is forgotten');
  });

  it('a failed write keeps everything for the next one', async () => {
    const clock = new ManualClock('2026-11-27T04:21:10Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({ clock, writer: kept.writer, limits });
    recorder.record(request());
    kept.failOnce();
    await assert.rejects(recorder.flushCounts(), /database down/);
    recorder.record(request());
    await recorder.flushCounts();
    assert.deepEqual(
      kept.counts.map((b) => [b.minutes[0]?.requests, b.callers[0]?.requests]),
      [[2, 2]],
    );
  });

  it('past the caps, operations and callers count as other; memory stays bounded', async () => {
    const clock = new ManualClock('2026-11-27T04:21:10Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({
      clock,
      writer: kept.writer,
      limits: { maxCallers: 3, maxOperations: 2, logSize: 10 },
    });
    for (let i = 0; i < 50; i++) {
      recorder.record(
        request({
          operation: `GET /op${i % 5}`,
          caller: { caller: `caller-${i}`, label: `key:${i}`, kind: 'key' },
        }),
      );
    }
    assert.ok(recorder.callerEntries <= 3 + 5, `${recorder.callerEntries} caller entries`);
    await recorder.flushCounts();
    const [batch] = kept.counts;
    assert.deepEqual(
      batch?.minutes.map((m) => [m.operation, m.requests]),
      [
        ['GET /op0', 10],
        ['GET /op1', 10],
        ['other', 30],
      ],
    );
    const others = batch?.callers.filter((c) => c.caller === 'other') ?? [];
    assert.equal((batch?.callers.length ?? 0) - others.length, 3);
    assert.equal(
      others.reduce((n, c) => n + c.requests, 0),
      47,
    );
    assert.ok(others.every((c) => c.label === 'other' && c.kind === 'other'));
  });

  it('a returning caller counts apart in each flush window and each UTC day', async () => {
    const clock = new ManualClock('2026-11-27T23:59:58Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({ clock, writer: kept.writer, limits });
    const caller = { caller: 'd'.repeat(32), label: 'key:abc…', kind: 'key' as const };
    recorder.record(request({ caller, projectId: 2 }));
    recorder.record(request({ caller }));
    recorder.record(request({ caller, status: 500 }));
    recorder.record(request({ caller, operation: 'POST /pets' }));
    clock.advance(2_500);
    recorder.record(request({ caller }));
    await recorder.flushCounts();
    clock.advance(1_000);
    recorder.record(request({ caller }));
    await recorder.flushCounts();
    assert.deepEqual(
      kept.counts.map((b) =>
        b.callers.map((c) => [c.projectId, c.operation, c.day, c.requests, c.errors, c.lastSeenAt]),
      ),
      [
        [
          [2, 'GET /pets', '2026-11-27', 1, 0, '2026-11-27T23:59:58.000Z'],
          [1, 'GET /pets', '2026-11-27', 2, 1, '2026-11-27T23:59:58.000Z'],
          [1, 'POST /pets', '2026-11-27', 1, 0, '2026-11-27T23:59:58.000Z'],
          [1, 'GET /pets', '2026-11-28', 1, 0, '2026-11-28T00:00:00.500Z'],
        ],
        [[1, 'GET /pets', '2026-11-28', 1, 0, '2026-11-28T00:00:01.500Z']],
      ],
    );
  });

  it('operations are capped per project and minute: another project and the next minute count apart', async () => {
    const clock = new ManualClock('2026-11-27T04:21:10Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({
      clock,
      writer: kept.writer,
      limits: { maxCallers: 100, maxOperations: 1, logSize: 0 },
    });
    recorder.record(request({ operation: 'GET /a' }));
    recorder.record(request({ operation: 'GET /b' }));
    recorder.record(request({ operation: 'GET /b', status: 404 }));
    recorder.record(request({ operation: 'GET /b', projectId: 2 }));
    recorder.record(request({ operation: 'GET /a', projectId: 2 }));
    clock.advance(60_000);
    recorder.record(request({ operation: 'GET /b' }));
    await recorder.flushCounts();
    assert.deepEqual(
      kept.counts[0]?.minutes.map((m) => [
        m.minute.slice(11, 16),
        m.projectId,
        m.operation,
        m.status,
        m.requests,
      ]),
      [
        ['04:21', 1, 'GET /a', 200, 1],
        ['04:21', 1, 'other', 200, 1],
        ['04:21', 1, 'other', 404, 1],
        ['04:21', 2, 'GET /b', 200, 1],
        ['04:21', 2, 'other', 200, 1],
        ['04:22', 1, 'GET /b', 200, 1],
      ],
    );
    assert.deepEqual(kept.logs, [], 'logSize 0: no request log');
  });

  it('request log times: the clock to the millisecond, across seconds', async () => {
    const clock = new ManualClock('2026-11-27T04:21:59.998Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({ clock, writer: kept.writer, limits });
    for (const step of [0, 1, 1, 7, 93, 900, 1_050]) {
      clock.advance(step);
      recorder.record(request());
    }
    clock.set(0);
    recorder.record(request());
    await recorder.flushLogs();
    assert.deepEqual(
      kept.logs[0]?.entries.map((e) => e.at),
      [
        '2026-11-27T04:21:59.998Z',
        '2026-11-27T04:21:59.999Z',
        '2026-11-27T04:22:00.000Z',
        '2026-11-27T04:22:00.007Z',
        '2026-11-27T04:22:00.100Z',
        '2026-11-27T04:22:01.000Z',
        '2026-11-27T04:22:02.050Z',
        '1970-01-01T00:00:00.000Z',
      ],
    );
  });

  it('the request log keeps the last logSize entries per project, and writes them about every second', async () => {
    const clock = new ManualClock('2026-11-27T04:21:10.123Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({ clock, writer: kept.writer, limits });
    for (let i = 0; i < 35; i++) recorder.record(request({ requestId: `r${i}`, projectId: i < 30 ? 1 : 2 }));
    await recorder.flushLogs();
    assert.equal(kept.logs.length, 1);
    assert.equal(kept.logs[0]?.keep, 10);
    const ids = kept.logs[0]?.entries.map((e) => e.requestId);
    assert.deepEqual(ids, [
      ...Array.from({ length: 10 }, (_, i) => `r${20 + i}`),
      'r30',
      'r31',
      'r32',
      'r33',
      'r34',
    ]);
    assert.deepEqual(Object.keys(kept.logs[0]?.entries[0] ?? {}).sort(), [
      'at',
      'bytesIn',
      'bytesOut',
      'callerLabel',
      'latencyMs',
      'method',
      'operation',
      'path',
      'projectId',
      'requestId',
      'status',
    ]);
    assert.equal(kept.logs[0]?.entries[0]?.at, '2026-11-27T04:21:10.123Z');
  });

  it("on the schedule, a busy project's log is written every busyEveryMs, a quiet one's every flush", async () => {
    const clock = new ManualClock('2026-11-27T04:21:10Z');
    const kept = keptBatches();
    const recorder = new TrafficRecorder({ clock, writer: kept.writer, limits });
    const written = () => kept.logs.flatMap((batch) => batch.entries.map((e) => e.requestId));
    let n = 0;
    // Each second: 15 requests of project 1 (more than the 10 the log keeps), 1 of project 2.
    const second = async () => {
      for (let i = 0; i < 15; i++) recorder.record(request({ requestId: `a${n++}` }));
      recorder.record(request({ requestId: `b${n++}`, projectId: 2 }));
      clock.advance(1_000);
      await recorder.flushLogs({ busyEveryMs: 5_000 });
    };
    await second();
    // The first write of a busy project is not held back: its last 10, and project 2's one.
    assert.deepEqual(written(), [...Array.from({ length: 10 }, (_, i) => `a${5 + i}`), 'b15']);
    kept.logs.length = 0;
    for (let s = 2; s <= 5; s++) await second();
    // Seconds 2–5: project 2 each second, project 1 held (its ring keeps its last 10).
    assert.deepEqual(written(), ['b31', 'b47', 'b63', 'b79']);
    kept.logs.length = 0;
    await second();
    // Second 6, 5 s after its last write: project 1's last 10, then project 2's.
    assert.deepEqual(written(), [...Array.from({ length: 10 }, (_, i) => `a${85 + i}`), 'b95']);
    kept.logs.length = 0;
    // A flush that is not the schedule's (tests, a node's stop) writes what every project holds.
    for (let i = 0; i < 12; i++) recorder.record(request({ requestId: `c${i}` }));
    await recorder.flushLogs();
    assert.deepEqual(
      written(),
      Array.from({ length: 10 }, (_, i) => `c${2 + i}`),
    );
  });
});
