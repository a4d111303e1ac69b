import { createTransport } from 'nodemailer';

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
 * Sends one plain-text message through nodemailer (STARTTLS when the server offers it, login from
 * the URL's credentials, the message encoded as SMTP wants it). Headers are kept on one line here
 * as well, whatever the caller passed. Any refusal, or a silence longer than `timeoutMs`, rejects.
 */
export async function sendMail(server: SmtpServer, message: MailMessage): Promise<void> {
  const timeoutMs = server.timeoutMs ?? 10_000;
  const transport = createTransport({
    url: server.url,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  try {
    await transport.sendMail({
      from: oneLine(message.from),
      to: oneLine(message.to),
      subject: oneLine(message.subject),
      text: message.text,
    });
  } finally {
    transport.close();
  }
}
