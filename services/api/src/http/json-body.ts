import type { IncomingMessage } from 'node:http';
import { RequestEntityTooLarge, ValidationError } from '@quire/errors';

/**
 * The request's media type (`type/subtype`, lower-cased, parameters left out), or '' without one:
 * what express' `req.is` compares, for requests that never went through express.
 */
export function mediaTypeOf(req: IncomingMessage): string {
  const header = req.headers['content-type'];
  if (!header) return '';
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}

/**
 * Whether the hot path can read this body itself: JSON, not compressed, in UTF-8. Anything else
 * (a form, a multipart upload, gzip, another charset) goes through express' body parsers.
 */
export function isPlainJsonBody(req: IncomingMessage): boolean {
  if (mediaTypeOf(req) !== 'application/json') return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  const header = req.headers['content-type'] ?? '';
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(header)?.[1]?.toLowerCase();
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

const UNITS: Readonly<Record<string, number>> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** A size as body-parser's `limit` takes it (`25mb`, `100kb`, `1048576`): bytes. */
export function parseSize(size: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(size);
  if (!m) throw new Error(`invalid size ${JSON.stringify(size)} (e.g. 25mb, 100kb)`);
  return Math.floor(Number(m[1]) * (UNITS[(m[2] ?? 'b').toLowerCase()] ?? 1));
}

/**
 * A JSON body as express.json({ strict: false }) gives it: any JSON value, an empty body as `{}`,
 * a byte-order mark ignored; malformed JSON a 417 and more than `limit` bytes a 413, in Frappe's
 * envelope, as the express parsers answer them (middleware/body.ts).
 */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        cleanup();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      let text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length)).toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text === '') {
        resolve({});
        return;
      }
      try {
        resolve(JSON.parse(text) as unknown);
      } catch {
        reject(new ValidationError('Invalid JSON in the request body', { title: 'Invalid Request' }));
      }
    };
    const onAborted = () => {
      cleanup();
      reject(new ValidationError('The request was aborted', { title: 'Invalid Request' }));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onAborted);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onAborted);
  });
}

function tooLarge(): Error {
  return new RequestEntityTooLarge('Request body too large', { title: 'Too Large' });
}
