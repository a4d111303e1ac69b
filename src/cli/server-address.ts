import { isLoopbackHost } from '../lib/address-policy.ts';
import { UsageError } from './errors.ts';

const SCHEME = /^[a-z][a-z\d+.-]*:\/\//i;
/** `host`, `host:port`, `[v6]`, `[v6]:port`, each optionally followed by a /path prefix. */
const BARE = /^(?<host>\[[^\]/]*\]|[^:/[\]]+)(?::(?<port>[^/]*))?(?<rest>\/.*)?$/;

/**
 * Checks and normalises a server address to `http(s)://host[:port][/prefix]` (no trailing
 * slash). A full URL is taken as it is; an address without a scheme (`localhost:8080`,
 * `kennel.example.com`, `[::1]:8080`) gets http for a loopback host and https for any other
 * (docs/decisions/cli.md, "Server addresses without a scheme"). `from` names where the address was
 * given (`--server`, `KENNEL_URL`), so the usage error points at it.
 */
export function normaliseServer(input: string, from = 'The server address'): string {
  const text = input.trim();
  const url = SCHEME.test(text) ? parseFull(text, from) : parseBare(text, from);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(
      `${from} must use http:// or https:// (got ${url.protocol}//): give http://host:port or https://host.`,
    );
  }
  if (url.username || url.password) {
    throw new UsageError(`${from}: put no user name or password in it; sign in with kennel login.`);
  }
  if (url.search || url.hash) throw new UsageError(`${from} takes no ?query or #fragment (got "${input}").`);
  return url.toString().replace(/\/+$/, '');
}

function parseFull(text: string, from: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new UsageError(
      `${from} "${text}" is not a valid address: give host:port, http://host:port or https://host.`,
    );
  }
}

function parseBare(text: string, from: string): URL {
  const example = 'such as localhost:8080, https://kennel.example.com or [::1]:8080';
  if (text === '') throw new UsageError(`${from} is empty: give one ${example}.`);
  if (/^https?:/i.test(text)) {
    throw new UsageError(
      `${from} "${text}" is not a URL: write the scheme with two slashes, as in http://host:port.`,
    );
  }
  const match = BARE.exec(text);
  if (!match?.groups) {
    const colons = (text.split('/')[0] ?? '').split(':').length - 1;
    throw new UsageError(
      colons > 1 && !text.startsWith('[')
        ? `${from} "${text}" looks like an IPv6 address: put it in brackets, as in [::1]:8080.`
        : `${from} "${text}" is not a server address: give one ${example}.`,
    );
  }
  const { host = '', port, rest = '' } = match.groups;
  if (port !== undefined && !/^\d{1,5}$/.test(port)) {
    throw new UsageError(
      port === ''
        ? `${from} "${text}" has no port after the colon: give host:port, as in localhost:8080.`
        : `${from} "${text}" has the port "${port}": a port is a number from 1 to 65535.`,
    );
  }
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    throw new UsageError(`${from} "${text}" has the port ${port}: a port is a number from 1 to 65535.`);
  }
  const address = `${host}${port === undefined ? '' : `:${port}`}${rest}`;
  try {
    // Plain HTTP only where nothing leaves the machine; anything else is reached over TLS.
    const { hostname } = new URL(`http://${address}`);
    return new URL(`${isLoopbackHost(hostname) ? 'http' : 'https'}://${address}`);
  } catch {
    throw new UsageError(`${from} "${text}" is not a server address: give one ${example}.`);
  }
}
