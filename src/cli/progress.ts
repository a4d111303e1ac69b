import type { TextStream } from './io.ts';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 80;
const CLEAR_LINE = '\r\x1b[2K';

/** `90` → `1m 30s`, `3600` → `1h 0m`. */
export function formatSeconds(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/**
 * Progress for people, on stderr: a spinner while a request runs and a countdown between
 * attempts. Both redraw one line, so they appear only when the stream is a terminal; off a
 * terminal the spinner is silent and the countdown writes a single line, which keeps logs clean.
 */
export class Progress {
  readonly #stream: TextStream;
  #shown = false;

  constructor(stream: TextStream) {
    this.#stream = stream;
  }

  get live(): boolean {
    return this.#stream.isTTY === true;
  }

  /** Shows `text` with a spinner until `work` settles, then clears the line. */
  async during<T>(text: string, work: Promise<T>): Promise<T> {
    if (!this.live) return work;
    let frame = 0;
    const draw = () => this.#draw(`${FRAMES[frame++ % FRAMES.length]} ${text}`);
    draw();
    const timer = setInterval(draw, FRAME_MS);
    try {
      return await work;
    } finally {
      clearInterval(timer);
      this.clear();
    }
  }

  /**
   * Waits `ms`, showing `text(secondsLeft)`: redrawn every second on a terminal, written once
   * otherwise.
   */
  async countdown(ms: number, text: (secondsLeft: number) => string): Promise<void> {
    const end = Date.now() + ms;
    if (!this.live) {
      this.log(text(Math.ceil(ms / 1000)));
      await sleep(ms);
      return;
    }
    for (let left = end - Date.now(); left > 0; left = end - Date.now()) {
      this.#draw(text(Math.ceil(left / 1000)));
      await sleep(Math.min(left, left % 1000 || 1000));
    }
    this.clear();
  }

  /** A line that stays (clearing a spinner or countdown first). */
  log(text: string): void {
    this.clear();
    this.#stream.write(`${text}\n`);
  }

  clear(): void {
    if (this.#shown) this.#stream.write(CLEAR_LINE);
    this.#shown = false;
  }

  #draw(text: string): void {
    // A pseudo-terminal without a size reports 0 columns.
    const columns = this.#stream.columns || 80;
    const chars = [...text];
    this.#stream.write(
      CLEAR_LINE + (chars.length >= columns ? `${chars.slice(0, columns - 2).join('')}…` : text),
    );
    this.#shown = true;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Parses a duration: `10m`, `90s`, `1h30m`, `500ms`, or a bare number of seconds. Returns
 * milliseconds, or undefined when the text is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const match = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/.exec(trimmed);
  if (!match || trimmed === '') return undefined;
  const [, h, m, s, ms] = match.map((part) => Number(part ?? 0));
  return (((h ?? 0) * 60 + (m ?? 0)) * 60 + (s ?? 0)) * 1000 + (ms ?? 0);
}
