import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip, gzipSync } from 'node:zlib';

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

type Encoding = 'br' | 'gzip' | 'identity';

/**
 * A body kept in every encoding a browser may ask for, compressed once (never per request).
 * Brotli at its best quality costs seconds for the Swagger UI bundle, so it runs on the thread
 * pool; until it is ready the gzip copy is served.
 */
export class CompressedBody {
  readonly contentType: string;
  readonly identity: Buffer;
  /** A hash of the content: the asset's URL version and the base of its ETags. */
  readonly hash: string;
  #gzip: Buffer | undefined;
  #br: Buffer | undefined;
  #brotli: Promise<void> | undefined;
  readonly #brotliQuality: number;

  /**
   * `brotliQuality` below the best (11) for big bodies made per deploy: the best costs about 3 s a
   * megabyte of thread-pool time, quality 5 a hundredth of that for a slightly larger copy.
   */
  constructor(
    contentType: string,
    content: Buffer,
    { brotliQuality = constants.BROTLI_MAX_QUALITY }: { brotliQuality?: number } = {},
  ) {
    this.contentType = contentType;
    this.identity = content;
    this.#brotliQuality = brotliQuality;
    this.hash = createHash('sha256').update(content).digest('base64url').slice(0, 12);
  }

  /** Gzip now (tens of milliseconds), Brotli in the background. */
  compressSoon(): void {
    this.#gzip ??= gzipSync(this.identity, { level: 9 });
    this.#startBrotli();
  }

  /** Both compressed copies, ready when the promise settles (used for per-deploy pages). */
  async compress(): Promise<void> {
    this.#gzip ??= await gzipAsync(this.identity, { level: 9 });
    await this.#startBrotli();
  }

  #startBrotli(): Promise<void> {
    this.#brotli ??= brotliAsync(this.identity, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: this.#brotliQuality,
        [constants.BROTLI_PARAM_SIZE_HINT]: this.identity.length,
        [constants.BROTLI_PARAM_MODE]: this.contentType.startsWith('image/')
          ? constants.BROTLI_MODE_GENERIC
          : constants.BROTLI_MODE_TEXT,
      },
    }).then(
      (compressed) => {
        this.#br = compressed;
      },
      // Out of memory at worst; the gzip copy keeps being served.
      () => {},
    );
    return this.#brotli;
  }

  /** The representation to send: the best the client accepts that is ready and actually smaller. */
  pick(acceptEncoding: string | undefined): { encoding: Encoding; body: Buffer } {
    const accepted = acceptedEncodings(acceptEncoding ?? '');
    const candidates: [Encoding, Buffer | undefined][] = [
      ['br', this.#br],
      ['gzip', this.#gzip],
    ];
    for (const [encoding, body] of candidates) {
      if (body && accepted.has(encoding) && body.length < this.identity.length) return { encoding, body };
    }
    return { encoding: 'identity', body: this.identity };
  }

  /**
   * Answers GET/HEAD with this body: the encoding negotiated, `Vary: Accept-Encoding`, an ETag per
   * representation, and 304 when the client already has it.
   */
  send(req: IncomingMessage, res: ServerResponse, headers: Record<string, string | number>): void {
    const { encoding, body } = this.pick(req.headers['accept-encoding']);
    const etag = `"${this.hash}${encoding === 'identity' ? '' : `-${encoding}`}"`;
    const common = {
      ...headers,
      vary: 'Accept-Encoding',
      etag,
    };
    const match = req.headers['if-none-match'];
    if (match?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
      res.writeHead(304, common);
      res.end();
      return;
    }
    res.writeHead(200, {
      ...common,
      'content-type': this.contentType,
      'content-length': body.length,
      ...(encoding !== 'identity' && { 'content-encoding': encoding }),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

/** Encodings named in Accept-Encoding with a non-zero weight (`*` counts for both). */
function acceptedEncodings(header: string): Set<string> {
  const accepted = new Set<string>();
  for (const part of header.toLowerCase().split(',')) {
    const [name = '', ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    if (name === '*') {
      accepted.add('br');
      accepted.add('gzip');
    } else accepted.add(name.trim());
  }
  return accepted;
}
