import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countedInstructions } from './callgrind.ts';

/** `callgrind_control -e Ir <pid>` as valgrind 3.19 prints it (run with `node --test bench/`). */
const oneThread = `PID 23339: /usr/bin/node bench/edge-node.ts

  Totals:         Ir 
   Th 1  246,017,252 

`;

test('reads the instruction count of one thread', () => {
  assert.equal(countedInstructions(oneThread), 246_017_252);
});

test('adds up every thread', () => {
  const threads = `PID 7: node\n\n  Totals:       Ir \n   Th 1  1,308,184 \n   Th 2      2,000 \n  Th 10 5 \n\n`;
  assert.equal(countedInstructions(threads), 1_310_189);
});

test('counts nothing when counting is off (callgrind prints no table)', () => {
  const off = 'PID 23977: node\n  No information available as instrumentation is switched off.\n\n';
  assert.equal(countedInstructions(off), 0);
});
