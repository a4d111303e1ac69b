/**
 * URI paths in one normal form (RFC 3986 §6.2.2), so that two spellings of one path compare equal:
 * percent-escapes of unreserved characters are decoded (`%70ets` is `pets`, `%7E` is `~`), every
 * other escape is written in uppercase (`%2f` is `%2F`, and stays an escape: a decoded slash would
 * be another path), and characters a path may not hold raw are escaped. A `%` that starts no
 * escape is itself escaped (`%25`), so normalising twice changes nothing.
 *
 * Dot segments (`.` and `..`, raw or escaped) are not resolved here: `normalizeRequestPath`
 * reports them and the caller refuses the request (docs/decisions/edge-proxy.md).
 */

const HEX = '0123456789ABCDEF';

/** Characters kept raw in a path segment: unreserved, sub-delims, `:` and `@` (RFC 3986 §3.3). */
const PCHAR = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@")
  PCHAR[c.charCodeAt(0)] = 1;
const UNRESERVED = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~')
  UNRESERVED[c.charCodeAt(0)] = 1;

const hexValue = (code: number): number => {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
};

const escapeByte = (byte: number) => `%${HEX[byte >> 4]}${HEX[byte & 15]}`;

/**
 * `text` (a path, or a piece of one) in the normal form. `chars` says what a character outside
 * ASCII stands for: a byte (`latin1`, how node:http hands over a request target) or a character
 * to write as UTF-8 (`utf8`, a document's path template).
 */
export function normalizePathText(text: string, chars: 'latin1' | 'utf8'): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 37 /* % */) {
      const high = hexValue(text.charCodeAt(i + 1));
      const low = hexValue(text.charCodeAt(i + 2));
      out += text.slice(from, i);
      if (high < 0 || low < 0) {
        out += '%25';
        from = i + 1;
        continue;
      }
      const byte = high * 16 + low;
      out += byte < 128 && UNRESERVED[byte] === 1 ? String.fromCharCode(byte) : escapeByte(byte);
      i += 2;
      from = i + 1;
    } else if (code !== 47 /* / */ && (code >= 128 || PCHAR[code] !== 1)) {
      out += text.slice(from, i);
      if (code < 128 || chars === 'latin1') out += escapeByte(code & 0xff);
      else {
        const pair = code >= 0xd800 && code <= 0xdbff ? text.slice(i, i + 2) : text[i];
        let encoded: string;
        try {
          encoded = encodeURIComponent(pair as string);
        } catch {
          encoded = '%EF%BF%BD'; // a lone surrogate: U+FFFD, as TextEncoder writes it
        }
        out += encoded;
        i += (pair as string).length - 1;
      }
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Whether a normalised path has a `.` or `..` segment. */
function hasDotSegment(path: string): boolean {
  let at = path.indexOf('/.');
  while (at !== -1) {
    const end = path.indexOf('/', at + 1);
    const segment = end === -1 ? path.slice(at + 1) : path.slice(at + 1, end);
    if (segment === '.' || segment === '..') return true;
    at = path.indexOf('/.', at + 1);
  }
  return path === '.' || path === '..' || path.startsWith('./') || path.startsWith('../');
}

/**
 * A request's path (without its query) in the normal form, or undefined when it has a dot
 * segment, raw or escaped (`/a/../b`, `/a/%2e%2E/b`, `/a/.%2e/b`). Paths that are already normal
 * (no `%`, no character to escape) come back as they are, the common case.
 */
export function normalizeRequestPath(path: string): string | undefined {
  const normal = normalizePathText(path, 'latin1');
  return hasDotSegment(normal) ? undefined : normal;
}
