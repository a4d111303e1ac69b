import type { RequestLog, RequestLogPage } from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { type Call, positiveInteger, projectCommand } from '../command.ts';
import { CliError } from '../errors.ts';
import { formatMs } from './traffic.ts';

/** One entry for people: time, method and path, status, latency, caller, operation, request id. */
function logLine(log: RequestLog): string {
  const operation = log.operation === `${log.method} ${log.path.split('?')[0]}` ? '' : `  (${log.operation})`;
  return `${log.at}  ${log.method} ${log.path}  ${log.status}  ${formatMs(log.latencyMs)}  ${log.caller ?? '-'}  ${log.requestId ?? '-'}${operation}`;
}

function print(call: Call, log: RequestLog): void {
  // One JSON object per line with --json, so the output can be piped into jq as it comes.
  call.io.stdout.write(call.out.json ? `${JSON.stringify(log)}\n` : `${logLine(log)}\n`);
}

/** The events of a text/event-stream body: `id:` and `data:` lines, comments skipped. */
async function* events(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ id: string | undefined; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replaceAll('\r\n', '\n');
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) yield { id, data: data.join('\n') };
      end = buffer.indexOf('\n\n');
    }
  }
}

/** How long to wait before reconnecting a stream the server closed (a restart). */
const RECONNECT_MS = 2_000;

/** Prints the stream's entries after `after` until Ctrl-C; reconnects (with Last-Event-ID) when it ends. */
async function follow(call: Call, slug: string, after: number): Promise<never> {
  const api = call.api();
  let last = after;
  for (;;) {
    let response: Response;
    try {
      response = await api.stream(
        `${path`/api/v1/projects/${slug}/logs/stream`}?after=${last}`,
        { 'last-event-id': String(last) },
        new AbortController().signal,
      );
    } catch (error) {
      // A server restarting is waited for; any other failure (not signed in, no such project) ends.
      if (!(error instanceof CliError && error.code === 'server_unreachable')) throw error;
      await new Promise((resume) => setTimeout(resume, RECONNECT_MS));
      continue;
    }
    try {
      for await (const event of events(response.body as ReadableStream<Uint8Array>)) {
        const log = JSON.parse(event.data) as RequestLog;
        print(call, log);
        last = log.id;
      }
    } catch {
      // The connection dropped: connect again below.
    }
    await new Promise((resume) => setTimeout(resume, RECONNECT_MS));
  }
}

export const logsCommand = projectCommand({
  name: 'logs',
  summary: "Show a project's last requests; --follow streams new ones",
  options: {
    limit: {
      type: 'string',
      value: 'N',
      description: 'How many of the last requests to show first (default 50)',
    },
    follow: { type: 'boolean', short: 'f', description: 'Keep printing requests as they come, until Ctrl-C' },
  },
  description:
    'The request log of every edge node, oldest of the last N first: time, method and path (query values dropped), status, latency, caller label, request id, and the operation when it is not the path. No bodies or header values are kept. --follow keeps printing new requests as the platform stores them (within about a second) until Ctrl-C, reconnecting when the server restarts. --json prints one JSON object per line.',
  examples: [
    'kennel logs petstore',
    'kennel logs petstore --follow',
    'kennel logs petstore -f --json | jq .status',
  ],
  async run(call, slug) {
    const given = call.string('limit');
    const limit = given === undefined ? 50 : positiveInteger(call, '--limit', given);
    if (limit > 1000) throw call.usage(`--limit is at most 1000 (got ${limit}).`);
    const page = await call
      .api()
      .get<RequestLogPage>(`${path`/api/v1/projects/${slug}/logs`}?limit=${limit}`);
    for (const log of [...page.logs].reverse()) print(call, log);
    if (!call.flag('follow')) {
      if (page.logs.length === 0 && !call.out.json) call.out.note(`No requests logged for ${slug} yet.`);
      return 0;
    }
    if (!call.out.json) call.out.note(`Following ${slug}'s requests (Ctrl-C to stop)…`);
    // After the newest shown; an empty log is followed from its start.
    return follow(call, slug, page.logs[0]?.id ?? 0);
  },
});
