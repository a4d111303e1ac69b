import { once } from 'node:events';
import { type AddressInfo, createServer, type Server } from 'node:net';

export interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
}

/** Text as a mail reader shows it: quoted-printable soft breaks and escapes undone. */
export const unquote = (text: string) =>
  text
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

/** A mail's data (headers and body), quoted-printable undone. */
export const textOfMail = (mail: ReceivedMail) => unquote(mail.data);

/**
 * A small SMTP server on loopback (no TLS, no auth) that keeps what it receives: enough for the
 * platform's client to talk to a real socket and a real protocol exchange.
 */
export class SmtpReceiver {
  readonly mails: ReceivedMail[] = [];
  #server: Server | undefined;

  async start(): Promise<string> {
    this.#server = createServer((socket) => {
      socket.setEncoding('utf8');
      let buffer = '';
      let inData = false;
      let mail: ReceivedMail = { from: '', to: [], data: '' };
      const reply = (line: string) => socket.write(`${line}\r\n`);
      reply('220 test smtp');
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        for (;;) {
          if (inData) {
            const end = buffer.indexOf('\r\n.\r\n');
            if (end === -1) return;
            mail.data = buffer.slice(0, end).replace(/^\.\./gm, '.');
            buffer = buffer.slice(end + 5);
            inData = false;
            this.mails.push(mail);
            mail = { from: '', to: [], data: '' };
            reply('250 queued');
            continue;
          }
          const end = buffer.indexOf('\r\n');
          if (end === -1) return;
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const verb = line.slice(0, 4).toUpperCase();
          if (verb === 'EHLO') socket.write('250-test smtp\r\n250 8BITMIME\r\n');
          else if (verb === 'MAIL') {
            mail.from = /<(.*)>/.exec(line)?.[1] ?? '';
            reply('250 ok');
          } else if (verb === 'RCPT') {
            mail.to.push(/<(.*)>/.exec(line)?.[1] ?? '');
            reply('250 ok');
          } else if (verb === 'DATA') {
            inData = true;
            reply('354 go on');
          } else if (verb === 'QUIT') {
            reply('221 bye');
            socket.end();
          } else reply('502 not implemented');
        }
      });
    });
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    return `smtp://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((done) => this.#server?.close(() => done()) ?? done());
  }
}
