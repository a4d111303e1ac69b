/** One HTTP answer, read whole: what seeding and the byte-for-byte comparisons need. */
export interface Answer {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** One request (with `headers`, e.g. an API key), its answer read whole. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers.entries()),
    body: await response.text(),
  };
}

/** `call`, failing unless the answer has the expected status. */
export async function expectCall(
  base: string,
  method: string,
  path: string,
  status: number,
  body?: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<Answer> {
  const answer = await call(base, method, path, body, headers);
  if (answer.status !== status) {
    throw new Error(`${method} ${base}${path} answered ${answer.status}, expected ${status}: ${answer.body}`);
  }
  return answer;
}

/** Headers a server writes on its own (per connection or per answer), left out of comparisons. */
const TRANSPORT_HEADERS = new Set([
  'date',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
]);

export function contentHeaders(answer: Answer, omit: readonly string[] = []): Record<string, string> {
  return Object.fromEntries(
    Object.entries(answer.headers).filter(([name]) => !TRANSPORT_HEADERS.has(name) && !omit.includes(name)),
  );
}
