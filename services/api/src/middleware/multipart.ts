import type { UploadedFile } from '@quire/apps';
import { RequestEntityTooLarge, ValidationError } from '@quire/errors';
import busboy from 'busboy';
import type { NextFunction, Request, Response } from 'express';

/**
 * multipart/form-data (upload_file, and frappe-js-sdk's file.uploadFile): fields become the body,
 * files are buffered into `res.locals.files`, each at most `maxFileSize` bytes (413 beyond).
 */
export function multipart(maxFileSize: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    let parser: busboy.Busboy;
    try {
      // busboy stops a file when it reaches the limit; a file of exactly maxFileSize is allowed.
      parser = busboy({ headers: req.headers, limits: { fileSize: maxFileSize + 1, files: 20, fields: 1000, fieldSize: 1024 * 1024 } });
    } catch {
      next(new ValidationError('Invalid multipart request', { title: 'Invalid Request' }));
      return;
    }
    const fields: Record<string, string> = {};
    const files: UploadedFile[] = [];
    let failure: unknown;
    parser.on('field', (name, value) => {
      if (!(name in fields)) fields[name] = value;
    });
    parser.on('file', (fieldname, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => {
        failure ??= new RequestEntityTooLarge(`File size exceeded the maximum allowed size of ${maxFileSize} bytes`, { title: 'File too big' });
      });
      stream.on('end', () => {
        files.push({ fieldname, filename: info.filename ?? '', contentType: info.mimeType || 'application/octet-stream', data: Buffer.concat(chunks) });
      });
    });
    parser.on('filesLimit', () => (failure ??= new RequestEntityTooLarge('Too many files in one request', { title: 'Too many files' })));
    parser.on('error', () => (failure ??= new ValidationError('Invalid multipart request', { title: 'Invalid Request' })));
    parser.on('close', () => {
      if (failure) {
        next(failure);
        return;
      }
      req.body = fields;
      res.locals.files = files;
      next();
    });
    req.pipe(parser);
  };
}
