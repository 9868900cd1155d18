import type { SendMailOptions } from 'nodemailer';

/**
 * One Email Queue row as the message nodemailer sends: its recipients, subject and body, with a
 * Message-ID made from the row's name, so a message sent again (after a worker died between
 * sending and recording it) carries the same id and receivers can tell it is the same message.
 */

/** The row's fields a message is made of (Frappe's names). */
export interface QueuedEmail {
  name: string;
  sender: string | null;
  recipients: string | null;
  subject: string | null;
  message: string | null;
  message_id: string | null;
}

/** Recipients as Email Queue holds them: separated by commas, semicolons or new lines. */
export function recipientsOf(text: string | null): string[] {
  return (text ?? '')
    .split(/[,;\n]/)
    .map((r) => r.trim())
    .filter((r) => r !== '');
}

// A body with markup is HTML (Frappe's emails are); anything else is sent as plain text.
const HTML_TAG = /<\/?(?:html|body|div|p|br|a|table|span|strong|em|b|i|ul|ol|li|h[1-6])\b[^>]*>/i;

/** The domain of an address (`Name <user@host>` or `user@host`), for the Message-ID. */
function domainOf(address: string): string {
  const at = /@([^\s>]+)>?\s*$/.exec(address);
  return at?.[1] ?? 'localhost';
}

export function messageIdOf(email: QueuedEmail, from: string): string {
  return email.message_id?.trim() || `<${email.name}@${domainOf(from)}>`;
}

export function mailOf(email: QueuedEmail, from: string): SendMailOptions {
  const body = email.message ?? '';
  return {
    from,
    to: recipientsOf(email.recipients),
    subject: email.subject ?? '',
    ...(HTML_TAG.test(body) ? { html: body } : { text: body }),
    messageId: messageIdOf(email, from),
  };
}
