import type { UploadedFile } from '@quire/apps';
import { RequestEntityTooLarge, ValidationError } from '@quire/errors';
import busboy from 'busboy';
import type { NextFunction, Request, Response } from 'express';

const invalid = () => new ValidationError('Invalid multipart request', { title: 'Invalid Request' });
const tooLarge = (message: string, title: string) => new RequestEntityTooLarge(message, { title });

/**
 * multipart/form-data (upload_file, and frappe-js-sdk's file.uploadFile): fields become the body,
 * files are buffered into `res.locals.files`, each at most `maxFileSize` bytes and the whole body at
 * most `maxBytes` (413 beyond). A body busboy cannot parse (truncated, a malformed part header) is
 * a 417; every failure answers exactly once, stops reading into memory and closes the connection,
 * whatever stream (the parser, a part, the request) reported it.
 */
export function multipart(maxFileSize: number, maxBytes: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (Number(req.headers['content-length']) > maxBytes) {
      refuse(req, res);
      next(tooLarge('Request body too large', 'Too Large'));
      return;
    }
    let parser: busboy.Busboy;
    try {
      // busboy stops a file when it reaches the limit; a file of exactly maxFileSize is allowed.
      parser = busboy({
        headers: req.headers,
        limits: { fileSize: maxFileSize + 1, files: 20, fields: 1000, parts: 1020, fieldSize: 1024 * 1024, headerPairs: 100 },
      });
    } catch {
      next(invalid());
      return;
    }
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    const files: UploadedFile[] = [];
    let received = 0;
    let settled = false;

    const finish = (failure?: Error): void => {
      if (settled) return;
      settled = true;
      req.off('data', count);
      if (failure) {
        // Not parser.destroy(): this often runs inside busboy's own write (a limit, a part's error),
        // which goes on using its state afterwards and would throw. Unpiped, it is fed nothing more.
        req.unpipe(parser);
        refuse(req, res);
        next(failure);
        return;
      }
      req.body = fields;
      res.locals.files = files;
      next();
    };
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) finish(tooLarge('Request body too large', 'Too Large'));
    };

    parser.on('field', (name, value) => {
      if (!Object.hasOwn(fields, name)) fields[name] = value;
    });
    parser.on('file', (fieldname, stream, info) => {
      const chunks: Buffer[] = [];
      // A part cut short ("Unexpected end of form") errors on its own stream: unheard, it would stop the process.
      stream.on('error', () => finish(invalid()));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => finish(tooLarge(`File size exceeded the maximum allowed size of ${maxFileSize} bytes`, 'File too big')));
      stream.on('end', () => {
        files.push({ fieldname, filename: info.filename ?? '', contentType: info.mimeType || 'application/octet-stream', data: Buffer.concat(chunks) });
      });
    });
    parser.on('filesLimit', () => finish(tooLarge('Too many files in one request', 'Too many files')));
    parser.on('partsLimit', () => finish(tooLarge('Too many parts in one request', 'Too many parts')));
    parser.on('fieldsLimit', () => finish(tooLarge('Too many fields in one request', 'Too many fields')));
    // A malformed part header is reported here without the parser closing: answer now, not never.
    parser.on('error', () => finish(invalid()));
    parser.on('close', () => finish());
    req.on('data', count);
    req.on('error', () => finish(invalid()));
    req.pipe(parser);
  };
}

/** The rest of a refused body is read and dropped, and the connection closes after the answer. */
function refuse(req: Request, res: Response): void {
  res.setHeader('Connection', 'close');
  req.resume();
}
