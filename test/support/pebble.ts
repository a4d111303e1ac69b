import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';

/**
 * Pebble, Let's Encrypt's test CA (Debian `pebble`), as the ACME server of the tests (see
 * TESTING.md, "ACME: Pebble"). It resolves names through the test DNS server and validates http-01
 * against `httpPort` on whatever address the name resolves to.
 */

const execFileAsync = promisify(execFile);

const INSTALL_HINT = 'apt-get install -y pebble (.ci/run installs it)';
const START_ATTEMPTS = 5;
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const OUTPUT_LIMIT = 64 * 1024;

export interface StartPebbleOptions {
  /** Where Pebble's validation authority fetches http-01 answers (on the address the name resolves to). */
  readonly httpPort: number;
  /** Where it would connect for tls-alpn-01; 0 (nothing answers) unless a test serves it. */
  readonly tlsPort?: number;
  /** The DNS server Pebble resolves names through, `127.0.0.1:<port>` (TestDns.servers[0]). */
  readonly dnsServer: string;
}

export interface TestPebble {
  /** `https://127.0.0.1:<port>/dir`; the same across restart(). */
  readonly directoryUrl: string;
  /** The throwaway CA of Pebble's own HTTPS listener: trust it to talk to the ACME API. */
  readonly caPem: string;
  /**
   * The root Pebble issues under (GET /roots/0 on the management port). Pebble makes a new one at
   * every start, so fetch it after the last restart().
   */
  rootPem(): Promise<string>;
  /** Stops Pebble (its state is gone: accounts, orders, roots). Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Starts Pebble again on the same ports with the same listener certificate (so clients keep
   * their directory URL and trust), stopping it first if it runs. A fresh CA: no accounts, a new root.
   */
  restart(): Promise<void>;
}

interface Ports {
  readonly api: number;
  readonly management: number;
}

interface Listener {
  readonly caPem: string;
  readonly certificatePem: string;
  readonly keyPem: string;
}

export async function startPebble(options: StartPebbleOptions): Promise<TestPebble> {
  const binary = findBinary('pebble');
  const listener = await createListenerCertificate();
  const newAgent = () => new Agent({ connect: { ca: listener.caPem } });
  let agent = newAgent();

  let ports: Ports | undefined;
  let child: ChildProcess | undefined;
  for (let attempt = 1; child === undefined; attempt++) {
    const candidate = { api: await freeLoopbackPort(), management: await freeLoopbackPort() };
    if (candidate.api === candidate.management) continue;
    const started = await launch(binary, options, candidate, listener, agent);
    if (started.ok) {
      child = started.child;
      ports = candidate;
    } else if (!started.portTaken || attempt >= START_ATTEMPTS) {
      await agent.close();
      throw new Error(started.error);
    }
  }
  const fixedPorts = ports as Ports;

  // A test run that dies without stop() must not leave Pebble behind.
  const killOnExit = () => child?.kill('SIGKILL');
  process.on('exit', killOnExit);

  return {
    directoryUrl: `https://127.0.0.1:${fixedPorts.api}/dir`,
    caPem: listener.caPem,
    async rootPem() {
      const url = `https://127.0.0.1:${fixedPorts.management}/roots/0`;
      const response = await request(url, { dispatcher: agent });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`GET ${url} answered ${response.statusCode}: ${text}`);
      return text;
    },
    async stop() {
      if (child !== undefined) await stopChild(child);
      child = undefined;
      process.removeListener('exit', killOnExit);
      if (!agent.closed) await agent.close();
    },
    async restart() {
      if (child !== undefined) await stopChild(child);
      child = undefined;
      if (agent.closed || agent.destroyed) agent = newAgent();
      const started = await launch(binary, options, fixedPorts, listener, agent);
      if (!started.ok) throw new Error(started.error);
      child = started.child;
      process.on('exit', killOnExit);
    },
  };
}

function findBinary(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {}
  }
  throw new Error(`${name} was not found: the ACME tests need Pebble. Install it with: ${INSTALL_HINT}`);
}

/**
 * Debian ships no certificate for Pebble's HTTPS listener: a throwaway CA and a leaf for
 * `localhost`, 127.0.0.1 and ::1, made with openssl and kept in memory (files only while Pebble starts).
 */
async function createListenerCertificate(): Promise<Listener> {
  const dir = mkdtempSync(join(tmpdir(), 'kennel-pebble-ca-'));
  const path = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  try {
    await execFileAsync('openssl', [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      path('ca.key'),
      '-out',
      path('ca.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=Kennel test Pebble listener CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    await execFileAsync('openssl', [
      'req',
      ...ec,
      '-keyout',
      path('key.pem'),
      '-out',
      path('leaf.csr'),
      '-subj',
      '/CN=localhost',
    ]);
    writeFileSync(
      path('leaf.ext'),
      [
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature',
        'extendedKeyUsage=serverAuth',
        'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
        '',
      ].join('\n'),
    );
    await execFileAsync('openssl', [
      'x509',
      '-req',
      '-in',
      path('leaf.csr'),
      '-CA',
      path('ca.pem'),
      '-CAkey',
      path('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      path('leaf.ext'),
      '-out',
      path('cert.pem'),
    ]);
    return {
      caPem: readFileSync(path('ca.pem'), 'utf8'),
      certificatePem: readFileSync(path('cert.pem'), 'utf8'),
      keyPem: readFileSync(path('key.pem'), 'utf8'),
    };
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(
      `openssl could not make Pebble's listener certificate: ${(error as Error).message}\n${stderr}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A TCP port free on 127.0.0.1 at this moment. */
async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port from listen(0)');
  return address.port;
}

type Launch = { ok: true; child: ChildProcess } | { ok: false; error: string; portTaken: boolean };

/**
 * Starts Pebble as our direct child and waits until its directory answers. Its config and the
 * listener pair live in a temporary directory only until then: Pebble reads them once at start.
 */
async function launch(
  binary: string,
  options: StartPebbleOptions,
  ports: Ports,
  listener: Listener,
  agent: Agent,
): Promise<Launch> {
  const dir = mkdtempSync(join(tmpdir(), 'kennel-pebble-'));
  try {
    writeFileSync(join(dir, 'cert.pem'), listener.certificatePem);
    writeFileSync(join(dir, 'key.pem'), listener.keyPem, { mode: 0o600 });
    const config = {
      pebble: {
        listenAddress: `127.0.0.1:${ports.api}`,
        managementListenAddress: `127.0.0.1:${ports.management}`,
        certificate: join(dir, 'cert.pem'),
        privateKey: join(dir, 'key.pem'),
        httpPort: options.httpPort,
        tlsPort: options.tlsPort ?? 0,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    };
    writeFileSync(join(dir, 'pebble.json'), JSON.stringify(config, null, 2));

    // `-strict=false` with `=`: Go's flag parser reads `-strict false` as the boolean flag plus a
    // positional argument and stops there, silently dropping every later flag (-dnsserver included).
    const args = ['-config', join(dir, 'pebble.json'), '-dnsserver', options.dnsServer, '-strict=false'];
    const child = spawn(binary, args, {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        // Validate at once instead of sleeping 0-15 s; never reject a good nonce; never reuse a
        // valid authorization (it still happens now and then, so clients must skip valid ones).
        PEBBLE_VA_NOSLEEP: '1',
        PEBBLE_WFE_NONCEREJECT: '0',
        PEBBLE_AUTHZREUSE: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    let spawnError: Error | undefined;
    child.once('error', (error) => (spawnError = error));

    const failure = (why: string): Launch => ({
      ok: false,
      portTaken: /address already in use/i.test(output),
      error:
        `Pebble did not start on 127.0.0.1:${ports.api} (${why}).\n${binary} ${args.join(' ')}\n${output}`.trim(),
    });
    const directoryUrl = `https://127.0.0.1:${ports.api}/dir`;
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (spawnError !== undefined) return failure(spawnError.message);
      if (child.exitCode !== null || child.signalCode !== null) {
        return failure(`exited with ${child.exitCode ?? child.signalCode}`);
      }
      if (await answers(directoryUrl, agent)) return { ok: true, child };
      if (Date.now() > deadline) {
        await stopChild(child);
        return failure(`directory not answering after ${START_TIMEOUT_MS} ms`);
      }
      await sleep(20);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function answers(url: string, agent: Agent): Promise<boolean> {
  try {
    const response = await request(url, { dispatcher: agent, signal: AbortSignal.timeout(1000) });
    await response.body.dump();
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

/** SIGTERM to the Pebble we started (SIGKILL after a while), and wait until it has exited. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
