/**
 * "Did you mean": the closest known name to a mistyped word. Distance is optimal string
 * alignment (Levenshtein plus swapping two neighbouring letters), so `domian` is two edits from
 * `domains`, as a person would count it.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] ?? [];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The closest name within two edits (one for words of three letters or fewer), if any. */
export function closest(word: string, names: readonly string[]): string | undefined {
  const limit = word.length <= 3 ? 1 : 2;
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = editDistance(word.toLowerCase(), name);
    if (d <= limit && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}
