import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * NSD as the authoritative server for the test zones (see TESTING.md, "DNS: NSD"). A real server
 * rather than an npm DNS library, because the checks under test depend on real DNS semantics: a
 * CNAME into another served zone is answered with the target's records too, NXDOMAIN differs from
 * NODATA, CAA is not chased through CNAMEs by the resolver.
 */

const execFileAsync = promisify(execFile);

export type DnsRecordType = 'A' | 'AAAA' | 'CNAME' | 'TXT' | 'CAA';

export interface DnsRecord {
  /**
   * '@' for the zone apex; a fully qualified name (equal to or under the zone, trailing dot
   * optional); anything else is relative to the zone ('shop', '_kennel-challenge.shop'). ASCII
   * only: IDN names go in their punycode form, as they would in a real zone.
   */
  readonly name: string;
  readonly type: DnsRecordType;
  /**
   * A/AAAA: the address. CNAME: the target hostname (made absolute). TXT: the text itself, quoted
   * and split into 255-byte strings by the harness. CAA: zone-file syntax, `0 issue "letsencrypt.org"`.
   */
  readonly value: string;
}

export interface StartDnsOptions {
  /**
   * The zones to serve. Their ancestors below the root (`test` for `example.test`) are served too,
   * empty, so that a climb up the tree (CAA, RFC 8659) gets the NODATA a real resolver would give
   * instead of REFUSED from a server that is not authoritative.
   */
  readonly zones: readonly string[];
}

export interface TestDns {
  readonly port: number;
  /** For a Resolver's setServers: `['127.0.0.1:<port>']`. */
  readonly servers: string[];
  /**
   * Replaces every record of the zone (SOA and NS are generated) and resolves once NSD serves the
   * new serial. A file nsd-checkzone refuses is an Error and nothing changes.
   */
  setRecords(zone: string, records: readonly DnsRecord[]): Promise<void>;
  addRecord(zone: string, record: DnsRecord): Promise<void>;
  /** Removes the records with this name and type (and value, when given). */
  removeRecord(zone: string, match: { name: string; type: DnsRecordType; value?: string }): Promise<void>;
  records(zone: string): readonly DnsRecord[];
  stop(): Promise<void>;
}

const INSTALL_HINT = 'apt-get install -y nsd (.ci/run installs it)';
const START_ATTEMPTS = 5;
const START_TIMEOUT_MS = 10_000;
const SERIAL_TIMEOUT_MS = 5_000;
const STOP_TIMEOUT_MS = 5_000;

export async function startDns(options: StartDnsOptions): Promise<TestDns> {
  const binaries = {
    nsd: findBinary('nsd'),
    control: findBinary('nsd-control'),
    checkzone: findBinary('nsd-checkzone'),
  };
  const requested = options.zones.map(canonicalZone);
  if (requested.length === 0) throw new Error('startDns: at least one zone is needed');
  const zones = withAncestors(requested);

  const dir = mkdtempSync(join(tmpdir(), 'kennel-dns-'));
  const records = new Map<string, DnsRecord[]>(zones.map((zone) => [zone, []]));
  const serials = new Map<string, number>(zones.map((zone) => [zone, 1]));
  for (const zone of zones) {
    await writeFile(zoneFile(dir, zone), renderZone(zone, 1, []));
  }

  let server: { child: ChildProcess; port: number } | undefined;
  try {
    for (let attempt = 1; server === undefined; attempt++) {
      const port = await freeLoopbackPort();
      const conf = join(dir, 'nsd.conf');
      await writeFile(conf, renderConfig(dir, port, zones));
      rmSync(join(dir, 'nsd.log'), { force: true });
      const started = await launch(binaries.nsd, conf, dir, port, zones);
      if (started.ok) server = { child: started.child, port };
      else if (!started.portTaken || attempt >= START_ATTEMPTS) throw new Error(started.error);
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const { child, port } = server;
  const conf = join(dir, 'nsd.conf');
  const servers = [`127.0.0.1:${port}`];
  // A test run that dies without stop() must not leave NSD behind. SIGTERM, not SIGKILL: NSD
  // takes its server and xfrd processes down with it only when it can handle the signal.
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);

  // Changes are applied one at a time so serials and reloads never interleave.
  let queue: Promise<void> = Promise.resolve();
  const change = (zone: string, edit: (current: DnsRecord[]) => DnsRecord[]): Promise<void> => {
    const next = queue.then(() => applyChange(canonicalZone(zone), edit));
    queue = next.catch(() => undefined);
    return next;
  };

  async function applyChange(zone: string, edit: (current: DnsRecord[]) => DnsRecord[]): Promise<void> {
    const current = records.get(zone);
    if (current === undefined) throw new Error(`startDns: zone ${zone} is not served (${zones.join(', ')})`);
    const wanted = edit(current);
    const serial = (serials.get(zone) ?? 1) + 1;
    const text = renderZone(zone, serial, wanted);
    // Checked before NSD sees it: `nsd-control reload` answers ok for a broken file and then
    // serves SERVFAIL for the whole zone.
    const candidate = `${zoneFile(dir, zone)}.next`;
    await writeFile(candidate, text);
    try {
      await execFileAsync(binaries.checkzone, [zone, candidate]);
    } catch (error) {
      const output = (error as { stderr?: string }).stderr ?? (error as Error).message;
      throw new Error(
        `nsd-checkzone refused the records for ${zone}:\n${output.trim()}\n--- zone file ---\n${text}`,
      );
    }
    await rename(candidate, zoneFile(dir, zone));
    const oldServers = serverProcesses(child.pid);
    const { stdout } = await execFileAsync(binaries.control, ['-c', conf, 'reload', zone]);
    if (stdout.trim() !== 'ok') throw new Error(`nsd-control reload ${zone} answered: ${stdout.trim()}`);
    await waitForReload(servers, zone, serial, oldServers);
    records.set(zone, wanted);
    serials.set(zone, serial);
  }

  return {
    port,
    servers,
    setRecords: (zone, wanted) => change(zone, () => [...wanted]),
    addRecord: (zone, record) => change(zone, (current) => [...current, record]),
    removeRecord: (zone, match) =>
      change(zone, (current) =>
        current.filter(
          (r) =>
            !(
              r.type === match.type &&
              ownerName(canonicalZone(zone), r.name) === ownerName(canonicalZone(zone), match.name) &&
              (match.value === undefined || r.value === match.value)
            ),
        ),
      ),
    records: (zone) => records.get(canonicalZone(zone)) ?? [],
    async stop() {
      process.removeListener('exit', killOnExit);
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** /usr/sbin is not on every PATH, and NSD installs there. */
function findBinary(name: string): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    if (dir === '') continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {}
  }
  throw new Error(`${name} was not found: the DNS tests need NSD. Install it with: ${INSTALL_HINT}`);
}

function canonicalZone(zone: string): string {
  return zone.toLowerCase().replace(/\.$/, '');
}

function withAncestors(zones: readonly string[]): string[] {
  const all = new Set<string>();
  for (const zone of zones) {
    const labels = zone.split('.');
    for (let i = 0; i < labels.length; i++) all.add(labels.slice(i).join('.'));
  }
  return [...all].sort();
}

function zoneFile(dir: string, zone: string): string {
  return join(dir, `${zone}.zone`);
}

function renderConfig(dir: string, port: number, zones: readonly string[]): string {
  const file = (name: string) => JSON.stringify(join(dir, name));
  return [
    'server:',
    `  ip-address: 127.0.0.1@${port}`,
    `  port: ${port}`,
    '  username: ""',
    '  chroot: ""',
    '  database: ""',
    '  server-count: 1',
    '  verbosity: 1',
    // Response rate limiting would drop answers to a test that asks a few hundred questions a second.
    '  rrl-ratelimit: 0',
    `  zonesdir: ${JSON.stringify(dir)}`,
    `  pidfile: ${file('nsd.pid')}`,
    `  logfile: ${file('nsd.log')}`,
    `  xfrdfile: ${file('xfrd.state')}`,
    `  zonelistfile: ${file('zone.list')}`,
    `  xfrdir: ${JSON.stringify(dir)}`,
    'remote-control:',
    '  control-enable: yes',
    // A unix socket: no TLS keys to generate, and no second port to find.
    `  control-interface: ${file('nsd.ctl')}`,
    ...zones.flatMap((zone) => [
      'zone:',
      `  name: "${zone}"`,
      `  zonefile: ${JSON.stringify(zoneFile(dir, zone))}`,
    ]),
    '',
  ].join('\n');
}

/** TTL 0 everywhere (the SOA minimum too, which caps negative caching) so every change is seen at once. */
function renderZone(zone: string, serial: number, records: readonly DnsRecord[]): string {
  const lines = [
    `$ORIGIN ${zone}.`,
    '$TTL 0',
    `@ IN SOA ns.${zone}. hostmaster.${zone}. ${serial} 3600 600 86400 0`,
    `@ IN NS ns.${zone}.`,
  ];
  for (const record of records) {
    lines.push(`${ownerName(zone, record.name)}. IN ${record.type} ${renderData(record)}`);
  }
  return `${lines.join('\n')}\n`;
}

function ownerName(zone: string, name: string): string {
  const bare = name.toLowerCase().replace(/\.$/, '');
  if (bare === '@' || bare === '') return zone;
  if (bare === zone || bare.endsWith(`.${zone}`)) return bare;
  return `${bare}.${zone}`;
}

function renderData(record: DnsRecord): string {
  switch (record.type) {
    case 'CNAME':
      return record.value.endsWith('.') ? record.value : `${record.value}.`;
    case 'TXT':
      return txtStrings(record.value);
    default:
      return record.value;
  }
}

/** A TXT record is a list of strings of at most 255 bytes each. */
function txtStrings(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const parts: string[] = [];
  for (let i = 0; i < bytes.length || parts.length === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    // Escape as \DDD so quotes, backslashes and non-ASCII bytes survive the zone-file parser.
    const escaped = [...chunk]
      .map((b) =>
        b < 0x20 || b > 0x7e || b === 0x22 || b === 0x5c
          ? `\\${String(b).padStart(3, '0')}`
          : String.fromCharCode(b),
      )
      .join('');
    parts.push(`"${escaped}"`);
  }
  return parts.join(' ');
}

/** A port free for both UDP and TCP on 127.0.0.1 at this moment (NSD binds both). */
async function freeLoopbackPort(): Promise<number> {
  for (;;) {
    const udp = createSocket('udp4');
    const port = await new Promise<number>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => resolve(udp.address().port));
    });
    const tcp = createServer();
    const tcpFree = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    if (tcpFree) await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if (tcpFree && port >= 1024) return port;
  }
}

type Launch = { ok: true; child: ChildProcess } | { ok: false; error: string; portTaken: boolean };

/**
 * Starts NSD in the foreground (`-d`) as our direct child, so it is stopped by its own PID, and
 * waits until every zone answers its SOA.
 */
async function launch(
  nsd: string,
  conf: string,
  dir: string,
  port: number,
  zones: readonly string[],
): Promise<Launch> {
  const child = spawn(nsd, ['-d', '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  const failure = (why: string): Launch => {
    const log = readLog(dir);
    return {
      ok: false,
      portTaken: /already in use|can't bind/i.test(`${output}\n${log}`),
      error: `NSD did not start on 127.0.0.1:${port} (${why}).\n${output}${log}`.trim(),
    };
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  const pending = new Set(zones);
  while (pending.size > 0) {
    if (exited) return failure(`exited with ${child.exitCode ?? child.signalCode}`);
    if (Date.now() > deadline) {
      await stopChild(child);
      return failure(`zones ${[...pending].join(', ')} not served after ${START_TIMEOUT_MS} ms`);
    }
    for (const zone of pending) {
      if ((await servedSerial([`127.0.0.1:${port}`], zone)) !== undefined) pending.delete(zone);
    }
    if (pending.size > 0) await sleep(20);
  }
  return { ok: true, child };
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'nsd.log'), 'utf8');
  } catch {
    return '';
  }
}

async function servedSerial(servers: string[], zone: string): Promise<number | undefined> {
  const resolver = new Resolver({ timeout: 200, tries: 1 });
  resolver.setServers(servers);
  try {
    return (await resolver.resolveSoa(zone)).serial;
  } catch {
    return undefined;
  }
}

/**
 * NSD applies a reload by forking new server processes and then telling the old ones to quit. For
 * a moment both read the shared sockets: the old one answers with the old records, or takes a
 * query and exits without answering it. A change is in place only once the new serial is served
 * and every server process from before the reload has gone.
 */
async function waitForReload(
  servers: string[],
  zone: string,
  serial: number,
  oldServers: ReadonlySet<number>,
): Promise<void> {
  const deadline = Date.now() + SERIAL_TIMEOUT_MS;
  for (;;) {
    const seen = await servedSerial(servers, zone);
    const lingering = [...oldServers].filter(isRunning);
    if (seen === serial && lingering.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `NSD reload of ${zone} not complete after ${SERIAL_TIMEOUT_MS} ms: serving serial ${seen ?? '(no answer)'} (expected ${serial}), old server processes still running: ${lingering.join(', ') || 'none'}`,
      );
    }
    await sleep(5);
  }
}

interface ProcessStat {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
  readonly state: string;
}

/** `/proc/<pid>/stat`: `pid (comm) state ppid ...`; comm may itself hold spaces and parentheses. */
function readStat(pid: number): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const [state = '', ppid = '0'] = text.slice(close + 2).split(' ');
  return { pid, ppid: Number(ppid), comm: text.slice(open + 1, close), state };
}

function isRunning(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** The processes under `root`, `root` included (Linux /proc). */
function processTree(root: number | undefined): ProcessStat[] {
  if (root === undefined) return [];
  const stats = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => readStat(Number(entry)))
    .filter((stat): stat is ProcessStat => stat !== undefined);
  const tree = new Set([root]);
  // Parents can have larger PIDs than their children after a wrap, so repeat until nothing is added.
  for (let grew = true; grew; ) {
    grew = false;
    for (const stat of stats) {
      if (!tree.has(stat.pid) && tree.has(stat.ppid)) {
        tree.add(stat.pid);
        grew = true;
      }
    }
  }
  return stats.filter((stat) => tree.has(stat.pid) && stat.state !== 'Z');
}

/** The PIDs of the `nsd: server N` processes, the ones answering queries. */
function serverProcesses(root: number | undefined): Set<number> {
  return new Set(
    processTree(root)
      .filter((stat) => stat.comm.startsWith('nsd: server'))
      .map((stat) => stat.pid),
  );
}

/**
 * SIGTERM to the NSD we started; it stops its xfrd and server processes, which we wait for too (by
 * their PIDs, noted before the signal) so the port is free when stop() returns.
 */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const family = processTree(child.pid).map((stat) => stat.pid);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  for (let left = family.filter(isRunning); left.length > 0; left = family.filter(isRunning)) {
    if (Date.now() > deadline) {
      for (const pid of left) process.kill(pid, 'SIGKILL');
      return;
    }
    await sleep(5);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
