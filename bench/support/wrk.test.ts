import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWrkOutput, parseWrkTime, wrkProblem } from './wrk.ts';

/** wrk 4.1 reports, as printed with --latency (run with `node --test bench/`). */
const clean = `Running 5s test @ http://127.0.0.1:4010/pets/1
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   768.43us  310.12us  12.04ms   93.10%
    Req/Sec    65.41k     3.02k   70.11k    80.00%
  Latency Distribution
     50%  712.00us
     75%  801.00us
     90%    0.98ms
     99%    2.20ms
  325511 requests in 5.00s, 105.84MB read
Requests/sec:  65093.87
Transfer/sec:     21.16MB
`;

const failing = `Running 5s test @ http://127.0.0.1:4010/store/orders
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.20s   300.00ms   1.90s    70.00%
    Req/Sec   100.00     20.00    150.00     60.00%
  Latency Distribution
     50%    1.10s
     75%    1.30s
     90%    1.60s
     99%    1.00m
  500 requests in 5.01s, 80.00KB read
  Socket errors: connect 0, read 2, write 0, timeout 7
  Non-2xx or 3xx responses: 12
Requests/sec:     99.80
Transfer/sec:     15.97KB
`;

test('wrk times convert to milliseconds', () => {
  assert.equal(parseWrkTime('712.00us'), 0.712);
  assert.equal(parseWrkTime('2.20ms'), 2.2);
  assert.equal(parseWrkTime('1.05s'), 1050);
  assert.equal(parseWrkTime('1.00m'), 60_000);
  assert.throws(() => parseWrkTime('fast'));
});

test('a clean report parses and has no problem', () => {
  const result = parseWrkOutput(clean);
  assert.equal(result.requests, 325511);
  assert.equal(result.requestsPerSecond, 65093.87);
  assert.equal(result.p99Ms, 2.2);
  assert.equal(result.non2xx, 0);
  assert.equal(wrkProblem(result), null);
});

test('error answers and socket errors make the run a failed measurement', () => {
  const result = parseWrkOutput(failing);
  assert.equal(result.p99Ms, 60_000);
  assert.equal(result.non2xx, 12);
  assert.deepEqual(result.socketErrors, { connect: 0, read: 2, write: 0, timeout: 7 });
  assert.match(
    wrkProblem(result) ?? '',
    /12 non-2xx\/3xx responses; socket errors: connect 0, read 2, write 0, timeout 7/,
  );
});

test('a report without the latency distribution is refused', () => {
  assert.throws(() => parseWrkOutput(clean.replace(/ {5}99%.*\n/, '')), /99% latency/);
});
