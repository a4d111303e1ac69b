import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFields, formatTable } from '../../src/cli/output.ts';
import { formatSeconds, Progress, parseDuration } from '../../src/cli/progress.ts';

const CLEAR = '\r\x1b[2K';

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, isTTY, columns: 80, write: (text: string) => writes.push(text) };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('durations', () => {
  it('parses 10m, 90s, 1h30m, 500ms and bare seconds; refuses anything else', () => {
    const cases: [string, number | undefined][] = [
      ['10m', 600_000],
      ['90s', 90_000],
      ['1h30m', 5_400_000],
      ['1m30s', 90_000],
      ['500ms', 500],
      ['2', 2000],
      ['1.5', 1500],
      [' 5S ', 5000],
      ['soon', undefined],
      ['', undefined],
      ['10x', undefined],
      ['m', undefined],
    ];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, JSON.stringify(text));
  });

  it('formats seconds for people', () => {
    assert.equal(formatSeconds(0), '0s');
    assert.equal(formatSeconds(4.2), '5s');
    assert.equal(formatSeconds(90), '1m 30s');
    assert.equal(formatSeconds(3725), '1h 2m');
  });
});

describe('the progress line', () => {
  it('spins on a terminal while the work runs, then clears the line', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const out = stream(true);
    const work = Promise.withResolvers<string>();
    const running = new Progress(out).during('Checking DNS for shop.example.com…', work.promise);
    t.mock.timers.tick(80 * 3);
    work.resolve('done');
    assert.equal(await running, 'done');
    assert.deepEqual(out.writes.slice(0, 4), [
      `${CLEAR}⠋ Checking DNS for shop.example.com…`,
      `${CLEAR}⠙ Checking DNS for shop.example.com…`,
      `${CLEAR}⠹ Checking DNS for shop.example.com…`,
      `${CLEAR}⠸ Checking DNS for shop.example.com…`,
    ]);
    assert.equal(out.writes.at(-1), CLEAR);
    const count = out.writes.length;
    t.mock.timers.tick(1000);
    assert.equal(out.writes.length, count, 'the spinner stopped');
  });

  it('stays silent off a terminal, and still clears up when the work fails', async () => {
    const out = stream(false);
    await assert.rejects(new Progress(out).during('x', Promise.reject(new Error('boom'))), /boom/);
    assert.deepEqual(out.writes, []);
  });

  it('counts down second by second on a terminal', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const out = stream(true);
    const done = new Progress(out).countdown(3000, (s) => `again in ${s}s`);
    for (let i = 0; i < 3; i++) {
      await flush();
      t.mock.timers.tick(1000);
    }
    await done;
    assert.deepEqual(out.writes, [
      `${CLEAR}again in 3s`,
      `${CLEAR}again in 2s`,
      `${CLEAR}again in 1s`,
      CLEAR,
    ]);
  });

  it('writes the countdown once, as a line, off a terminal', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const out = stream(false);
    const done = new Progress(out).countdown(5000, (s) => `again in ${s}s`);
    t.mock.timers.tick(5000);
    await done;
    assert.deepEqual(out.writes, ['again in 5s\n']);
  });

  it('cuts a line longer than the terminal', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const out = { ...stream(true), columns: 10 };
    const done = new Progress(out).countdown(1000, () => 'a very long message');
    t.mock.timers.tick(1000);
    await done;
    assert.equal(out.writes[0], `${CLEAR}a very l…`);
  });
});

describe('tables', () => {
  it('aligns columns with two spaces, shows empty cells as -, and pads nothing at the end', () => {
    assert.equal(
      formatTable(
        ['Type', 'Name', 'Value', 'TTL'],
        [
          ['CNAME', 'shop', 'petstore.platform.test', 3600],
          ['TXT', '_kennel-challenge.shop', null, 3600],
        ],
        '  ',
      ),
      [
        '  Type   Name                    Value                   TTL',
        '  CNAME  shop                    petstore.platform.test  3600',
        '  TXT    _kennel-challenge.shop  -                       3600',
      ].join('\n'),
    );
    assert.equal(formatTable(['Host'], [['bücher.example']]), 'Host\nbücher.example');
    assert.equal(
      formatFields([
        ['State', 'verified'],
        ['Verified at', undefined],
      ]),
      'State:       verified\nVerified at: -',
    );
  });
});
