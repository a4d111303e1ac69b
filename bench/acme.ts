import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:tls';
import * as acme from 'acme-client';
import { startDns, type TestDns } from '../test/support/dns.ts';
import { startPebble, type TestPebble } from '../test/support/pebble.ts';
import type { BenchConfig } from './support/config.ts';
import { type Check, median, type Suite, type SuiteReport } from './support/report.ts';
import { freePort, startServer } from './support/servers.ts';

/**
 * Issue 5: seconds from the Verify call to the new certificate served by the edge, against Pebble
 * and NSD on loopback. The platform runs as in production (`node src/main/platform.ts`, the ACME
 * issuer pointed at Pebble, its certificate job on its default schedule); the benchmark signs in,
 * adds a custom domain, then times `POST …/domains/{hostname}/verify` until a TLS handshake with
 * that SNI presents a certificate chaining to Pebble's root. Baseline, against the same Pebble:
 * acme-client alone ordering a certificate for another name.
 */
export const acmeSuite: Suite = {
  name: 'acme',
  description: 'seconds from Verify to the certificate served (Pebble, NSD), against acme-client alone',
  run: runAcmeSuite,
};

const ROOT = resolve(import.meta.dirname, '..');
const PLATFORM_DOMAIN = 'platform.test';
const ZONE = 'acme.bench.test';
const ADMIN = { email: 'bench@example.test', password: 'bench password 1' };
/** How often the benchmark tries a handshake while it waits for the certificate. */
const POLL_MS = 10;
const TIMEOUT_MS = 30_000;

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function call(
  port: number,
  method: string,
  path: string,
  options: { body?: unknown; cookie?: string; csrf?: string } = {},
): Promise<Answer> {
  return new Promise((resolvePromise, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          host: PLATFORM_DOMAIN,
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(options.cookie && { cookie: options.cookie }),
          ...(options.csrf && { 'x-csrf-token': options.csrf }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () =>
          resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The certificate the edge presents for `servername`, if it chains to `root`; else null. */
function servedByPebble(port: number, servername: string, root: string): Promise<X509Certificate | null> {
  return new Promise((resolvePromise) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca: root, rejectUnauthorized: false });
    socket.once('secureConnect', () => {
      const peer = socket.getPeerX509Certificate();
      const ok = socket.authorized && peer?.subjectAltName === `DNS:${servername}`;
      socket.destroy();
      resolvePromise(ok && peer ? peer : null);
    });
    socket.once('error', () => resolvePromise(null));
  });
}

export async function runAcmeSuite(config: BenchConfig, log: (line: string) => void): Promise<SuiteReport> {
  const work = mkdtempSync(join(tmpdir(), 'kennel-bench-acme-'));
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const problems: string[] = [];
    const runs = config.acmeRuns;
    log('starting NSD and Pebble');
    const dns: TestDns = await startDns({ zones: [ZONE, PLATFORM_DOMAIN] });
    cleanups.push(() => dns.stop());
    await dns.setRecords(PLATFORM_DOMAIN, [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
    const httpPort = await freePort();
    const httpsPort = await freePort();
    const pebble: TestPebble = await startPebble({ httpPort, dnsServer: dns.servers[0] as string });
    cleanups.push(() => pebble.stop());
    const pebbleCa = join(work, 'pebble-listener.pem');
    writeFileSync(pebbleCa, pebble.caPem);

    log('starting the platform (src/main/platform.ts) with its ACME issuer on Pebble');
    const platform = await startServer({
      name: 'Kennel platform',
      node: config.node,
      args: [join(ROOT, 'src', 'main', 'platform.ts')],
      cwd: ROOT,
      cpu: config.serverCpu,
      port: httpPort,
      env: {
        DATA_DIR: join(work, 'data'),
        DATABASE_URL: '',
        HTTP_PORT: String(httpPort),
        HTTPS_PORT: String(httpsPort),
        PETSTORE_PORT: String(await freePort()),
        PLATFORM_DOMAIN,
        DNS_SERVERS: dns.servers.join(','),
        CAA_IDENTIFIER: 'pebble.test',
        ACME_DIRECTORY_URL: pebble.directoryUrl,
        ACME_CA_FILE: pebbleCa,
        ACME_EMAIL: 'ops@example.test',
        KENNEL_ADMIN_EMAIL: ADMIN.email,
        KENNEL_ADMIN_PASSWORD: ADMIN.password,
        LOG_LEVEL: 'silent',
      },
      readyPath: '/',
    });
    cleanups.push(platform.stop);
    const root = await pebble.rootPem();

    const session = await call(httpPort, 'POST', '/api/v1/session', { body: ADMIN });
    if (session.status !== 201) throw new Error(`signing in answered ${session.status}: ${session.body}`);
    const setCookie = session.headers['set-cookie'];
    const cookie = (Array.isArray(setCookie) ? setCookie : [setCookie ?? ''])
      .map((c) => c.split(';')[0])
      .join('; ');
    const { csrfToken } = JSON.parse(session.body) as { csrfToken: string };
    const as = { cookie, csrf: csrfToken };

    // The platform's own timings: Verify → certificate served, one new name per run.
    const platformSeconds: number[] = [];
    const verifySeconds: number[] = [];
    for (let i = 0; i <= runs; i++) {
      const hostname = `d${i}.${ZONE}`;
      await dns.addRecord(ZONE, { name: `d${i}`, type: 'CNAME', value: `petstore.${PLATFORM_DOMAIN}` });
      const added = await call(httpPort, 'POST', '/api/v1/projects/petstore/domains', {
        ...as,
        body: { hostname },
      });
      if (added.status !== 201) throw new Error(`adding ${hostname} answered ${added.status}: ${added.body}`);
      const started = performance.now();
      const verified = await call(
        httpPort,
        'POST',
        `/api/v1/projects/petstore/domains/${encodeURIComponent(hostname)}/verify`,
        as,
      );
      const verifyDone = performance.now();
      if (verified.status !== 200)
        throw new Error(`verifying ${hostname} answered ${verified.status}: ${verified.body}`);
      let served: X509Certificate | null = null;
      while (!served && performance.now() - started < TIMEOUT_MS) {
        served = await servedByPebble(httpsPort, hostname, root);
        if (!served) await sleep(POLL_MS);
      }
      const seconds = (performance.now() - started) / 1000;
      if (!served) {
        problems.push(
          `${hostname}: no certificate from Pebble served within ${TIMEOUT_MS / 1000} s of Verify`,
        );
        continue;
      }
      // Run 0 warms up (the ACME account, the first connections to Pebble): not counted.
      log(
        `${i === 0 ? 'warm-up' : `run ${i}/${runs}`}  ${hostname}: Verify answered in ${((verifyDone - started) / 1000).toFixed(3)} s, certificate served after ${seconds.toFixed(3)} s`,
      );
      if (i > 0) {
        platformSeconds.push(seconds);
        verifySeconds.push((verifyDone - started) / 1000);
      }
    }

    // Baseline: acme-client alone, the same Pebble, names resolving to 127.0.0.2 where a bare
    // HTTP server on the same port answers the http-01 challenges.
    log('baseline: acme-client alone');
    const answers = new Map<string, string>();
    const challengeServer: Server = createServer((req, res) => {
      const token = (req.url ?? '').split('/').pop() ?? '';
      const answer = answers.get(token);
      res.writeHead(answer === undefined ? 404 : 200, { 'content-type': 'text/plain' });
      res.end(answer ?? '');
    });
    await new Promise<void>((done) => challengeServer.listen(httpPort, '127.0.0.2', done));
    cleanups.push(() => new Promise((done) => challengeServer.close(() => done())));
    acme.axios.defaults.httpsAgent = new HttpsAgent({ ca: pebble.caPem, keepAlive: true });
    const client = new acme.Client({
      directoryUrl: pebble.directoryUrl,
      accountKey: await acme.crypto.createPrivateEcdsaKey('P-256'),
      // The platform's issuer polls the same way (src/platform/certificates/acme-issuer.ts).
      backoffAttempts: 12,
      backoffMin: 250,
      backoffMax: 4000,
    });
    await client.createAccount({ termsOfServiceAgreed: true, contact: ['mailto:ops@example.test'] });
    const baselineSeconds: number[] = [];
    for (let i = 0; i <= runs; i++) {
      const hostname = `b${i}.${ZONE}`;
      await dns.addRecord(ZONE, { name: `b${i}`, type: 'A', value: '127.0.0.2' });
      const started = performance.now();
      const [key, csr] = await acme.crypto.createCsr(
        { commonName: hostname, altNames: [hostname] },
        await acme.crypto.createPrivateEcdsaKey('P-256'),
      );
      void key;
      const chain = await client.auto({
        csr,
        termsOfServiceAgreed: true,
        challengePriority: ['http-01'],
        skipChallengeVerification: true,
        challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
          answers.set(challenge.token, keyAuthorization);
        },
        challengeRemoveFn: async (_authz, challenge) => {
          answers.delete(challenge.token);
        },
      });
      const seconds = (performance.now() - started) / 1000;
      const leaf = new X509Certificate(chain);
      if (leaf.subjectAltName !== `DNS:${hostname}`)
        problems.push(`baseline ${hostname}: got ${leaf.subjectAltName}`);
      log(
        `${i === 0 ? 'warm-up' : `run ${i}/${runs}`}  acme-client alone, ${hostname}: ${seconds.toFixed(3)} s`,
      );
      if (i > 0) baselineSeconds.push(seconds);
    }

    return summarize(config, { platformSeconds, verifySeconds, baselineSeconds }, problems);
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => log(`cleanup failed: ${error.message}`));
    }
    rmSync(work, { recursive: true, force: true });
  }
}

function summarize(
  config: BenchConfig,
  figures: { platformSeconds: number[]; verifySeconds: number[]; baselineSeconds: number[] },
  problems: readonly string[],
): SuiteReport {
  const s = (values: readonly number[]) => (values.length === 0 ? '-' : `${median(values).toFixed(3)} s`);
  const max = (values: readonly number[]) =>
    values.length === 0 ? '-' : `${Math.max(...values).toFixed(3)} s`;
  const min = (values: readonly number[]) =>
    values.length === 0 ? '-' : `${Math.min(...values).toFixed(3)} s`;
  const row = (label: string, values: readonly number[]) => [
    label,
    s(values),
    min(values),
    max(values),
    `${values.length}/${config.acmeRuns}`,
  ];
  const checks: Check[] = [
    {
      label: 'Verify -> certificate served <= 0.5 s against Pebble (median)',
      passed: figures.platformSeconds.length > 0 && median(figures.platformSeconds) <= 0.5,
      measured: `median ${s(figures.platformSeconds)}, max ${max(figures.platformSeconds)} (acme-client alone: median ${s(figures.baselineSeconds)})`,
    },
  ];
  return {
    suite: 'acme',
    title: `ACME against Pebble and NSD on loopback: ${config.acmeRuns} runs after a warm-up, each a new name`,
    table: {
      headers: ['Measured', 'median', 'min', 'max', 'runs'],
      rows: [
        row('Verify -> certificate served by the edge (SNI)', figures.platformSeconds),
        row('  of which the Verify call itself', figures.verifySeconds),
        row('acme-client alone: order -> certificate', figures.baselineSeconds),
      ],
      right: [1, 2, 3],
    },
    checks,
    problems,
    warnings: [],
    data: figures,
  };
}
