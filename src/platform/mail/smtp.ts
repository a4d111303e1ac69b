import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type TLSSocket } from 'node:tls';

export interface MailMessage {
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

/** The SMTP server of SMTP_URL: smtp:// (STARTTLS when offered) or smtps:// (TLS from the start). */
export interface SmtpServer {
  readonly url: string;
  readonly timeoutMs?: number;
}

/** A header value on one line: control characters (CR, LF) would start a header of their own. */
const oneLine = (value: string) =>
  [...value].map((c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? ' ' : c)).join('');

/**
 * Sends one plain-text message: EHLO, STARTTLS if the server offers it (smtp://), AUTH PLAIN when
 * the URL has credentials, MAIL, RCPT, DATA. A small client, since Kennel mails only invitations;
 * any refusal or a silence longer than `timeoutMs` rejects.
 */
export async function sendMail(server: SmtpServer, message: MailMessage): Promise<void> {
  const url = new URL(server.url);
  const implicitTls = url.protocol === 'smtps:';
  const port = Number(url.port) || (implicitTls ? 465 : 587);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const timeoutMs = server.timeoutMs ?? 10_000;
  let socket: Socket | TLSSocket = implicitTls
    ? connectTls({ host, port, servername: host })
    : connectTcp({ host, port });
  const session = new Replies(socket, timeoutMs);
  try {
    await session.expect(220);
    let features = await session.command('EHLO kennel', 250);
    if (!implicitTls && /^STARTTLS$/im.test(features.replace(/^250[- ]/gm, ''))) {
      await session.command('STARTTLS', 220);
      socket = connectTls({ socket, servername: host });
      session.attach(socket);
      features = await session.command('EHLO kennel', 250);
    }
    if (url.username) {
      const plain = Buffer.from(
        `\u0000${decodeURIComponent(url.username)}\u0000${decodeURIComponent(url.password)}`,
      ).toString('base64');
      await session.command(`AUTH PLAIN ${plain}`, 235);
    }
    await session.command(`MAIL FROM:<${oneLine(message.from)}>`, 250);
    await session.command(`RCPT TO:<${oneLine(message.to)}>`, [250, 251]);
    await session.command('DATA', 354);
    const body = message.text
      .replace(/\r?\n/g, '\r\n')
      .split('\r\n')
      .map((line) => (line.startsWith('.') ? `.${line}` : line))
      .join('\r\n');
    const headers = [
      `From: ${oneLine(message.from)}`,
      `To: ${oneLine(message.to)}`,
      `Subject: ${oneLine(message.subject)}`,
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
    ].join('\r\n');
    await session.command(`${headers}\r\n\r\n${body}\r\n.`, 250);
    await session.command('QUIT', 221).catch(() => undefined);
  } finally {
    socket.destroy();
  }
}

/** Reads SMTP replies (a reply ends at the line whose code is followed by a space). */
class Replies {
  #buffer = '';
  #lines: string[] = [];
  #waiting: (() => void) | undefined;
  #failure: Error | undefined;
  #socket!: Socket;
  readonly #timeoutMs: number;

  constructor(socket: Socket, timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.attach(socket);
  }

  attach(socket: Socket): void {
    this.#socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let end = this.#buffer.indexOf('\r\n');
      while (end !== -1) {
        this.#lines.push(this.#buffer.slice(0, end));
        this.#buffer = this.#buffer.slice(end + 2);
        end = this.#buffer.indexOf('\r\n');
      }
      this.#waiting?.();
    });
    socket.on('error', (error) => {
      this.#failure = error;
      this.#waiting?.();
    });
    socket.on('close', () => {
      this.#failure ??= new Error('the SMTP server closed the connection');
      this.#waiting?.();
    });
  }

  async command(line: string, expected: number | number[]): Promise<string> {
    this.#socket.write(`${line}\r\n`);
    return this.expect(expected);
  }

  async expect(expected: number | number[]): Promise<string> {
    const reply = await this.#reply();
    const code = Number(reply.slice(0, 3));
    if (!(Array.isArray(expected) ? expected : [expected]).includes(code)) {
      throw new Error(`the SMTP server answered: ${reply.split('\r\n').pop()}`);
    }
    return reply;
  }

  async #reply(): Promise<string> {
    const until = Date.now() + this.#timeoutMs;
    const taken: string[] = [];
    for (;;) {
      const line = this.#lines.shift();
      if (line !== undefined) {
        taken.push(line);
        if (/^\d{3}(?!-)/.test(line)) return taken.join('\r\n');
        continue;
      }
      if (this.#failure) throw this.#failure;
      const left = until - Date.now();
      if (left <= 0) throw new Error(`the SMTP server did not answer within ${this.#timeoutMs} ms`);
      await new Promise<void>((done) => {
        const timer = setTimeout(done, left);
        this.#waiting = () => {
          clearTimeout(timer);
          this.#waiting = undefined;
          done();
        };
      });
    }
  }
}
