/**
 * The instructions counted since the counters were zeroed, every thread's, from
 * `callgrind_control -e Ir` (a `Totals:` table with one `Th <n>  <count>` line per thread).
 */
export function countedInstructions(printed: string): number {
  let total = 0;
  for (const match of printed.matchAll(/^\s*Th\s+\d+\s+([\d,]+)\s*$/gm)) {
    total += Number((match[1] ?? '0').replaceAll(',', ''));
  }
  return total;
}
