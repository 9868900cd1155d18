import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type { Outgoing } from './outgoing';

/**
 * One pooled nodemailer transport per server for the length of a flush: its emails reuse one
 * connection instead of a handshake (and login) each, and every connection is closed at the end.
 */
export class Transports {
  private readonly open = new Map<string, Transporter>();

  /** Sends one message through the server's transport; answers the Message-ID it went out with. */
  async send(outgoing: Outgoing, mail: SendMailOptions): Promise<string> {
    let transport = this.open.get(outgoing.key);
    if (!transport) {
      transport = nodemailer.createTransport(outgoing.options);
      // An error between sends (an idle connection dropped) must not crash the worker: each send reports its own.
      transport.on('error', () => {});
      this.open.set(outgoing.key, transport);
    }
    const info = (await transport.sendMail(mail)) as { messageId?: unknown };
    return typeof info.messageId === 'string' ? info.messageId : (mail.messageId ?? '');
  }

  close(): void {
    for (const transport of this.open.values()) transport.close();
    this.open.clear();
  }
}
