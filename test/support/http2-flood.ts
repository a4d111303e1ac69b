import { parentPort, Worker, workerData } from 'node:worker_threads';
import { FRAME, frame, headerBlock, headersFrame, RawHttp2, rstStream, settings } from './http2-frames.ts';

/**
 * HTTP/2 floods sent from a worker thread: the attacker's own work (building frames, TLS) then
 * runs beside the edge, as a real attacker's would, instead of in the event loop the edge and the
 * victim share in a test. Resolves with what the edge sent back: GOAWAY's code, if any.
 */
export type FloodKind =
  | 'rapid reset'
  | 'CONTINUATION flood'
  | 'SETTINGS flood'
  | 'PING flood'
  | 'WINDOW_UPDATE flood';

export interface FloodResult {
  readonly goaway: number | undefined;
  readonly closed: boolean;
  readonly streamsSent: number;
}

export function runFlood(port: number, servername: string, kind: FloodKind): Promise<FloodResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { port, servername, kind } });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

async function flood(port: number, servername: string, kind: FloodKind): Promise<FloodResult> {
  const raw = await RawHttp2.open(port, servername);
  const get = (path: string): [string, string][] => [
    [':method', 'GET'],
    [':scheme', 'https'],
    [':authority', servername],
    [':path', path],
  ];
  let streams = 0;
  if (kind === 'rapid reset') {
    let stream = 1;
    for (let batch = 0; batch < 40 && !raw.closed; batch++) {
      const frames: Buffer[] = [];
      for (let i = 0; i < 50; i++, stream += 2)
        frames.push(headersFrame(stream, get('/api/slow')), rstStream(stream));
      streams += 50;
      raw.write(...frames);
      await tick();
    }
  } else if (kind === 'CONTINUATION flood') {
    raw.write(headersFrame(1, get('/api/x'), { endHeaders: false }));
    const piece = frame(FRAME.CONTINUATION, 0, 1, headerBlock([['x-fill', 'a'.repeat(1000)]]));
    for (let i = 0; i < 40 && !raw.closed; i++) {
      raw.write(...Array.from({ length: 100 }, () => piece));
      await tick();
    }
  } else {
    // Acknowledgements the client never reads pile up on the edge's side.
    raw.socket.pause();
    const update = Buffer.alloc(4);
    update.writeUInt32BE(1, 0);
    const one =
      kind === 'SETTINGS flood'
        ? settings()
        : kind === 'PING flood'
          ? frame(FRAME.PING, 0, 0, Buffer.alloc(8))
          : frame(FRAME.WINDOW_UPDATE, 0, 0, update);
    for (let i = 0; i < 100 && !raw.socket.destroyed; i++) {
      raw.write(...Array.from({ length: 500 }, () => one));
      await tick();
    }
    raw.socket.resume();
  }
  const goaway = await raw.waitFor((f) => f.type === FRAME.GOAWAY, 3_000);
  const result = { goaway: goaway?.payload.readUInt32BE(4), closed: raw.closed, streamsSent: streams };
  raw.close();
  return result;
}

if (parentPort && workerData?.kind) {
  const { port, servername, kind } = workerData as { port: number; servername: string; kind: FloodKind };
  parentPort.postMessage(await flood(port, servername, kind));
}
