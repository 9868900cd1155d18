import { RequestEntityTooLarge, ValidationError } from '@quire/errors';
import { parseSize } from '../http/json-body';
import { multipart } from './multipart';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/**
 * Request bodies: JSON (any JSON value; scalars are refused later), form fields, and text (a JSON
 * document sent as text/plain still works for create/update, as in Frappe). A request without a
 * body (most GETs) skips parsing entirely. Malformed JSON is a 417 and an oversized body a 413,
 * both in Frappe's envelope.
 */
export function bodyParsers(limit: string, maxFileSize: number): RequestHandler {
  // A multipart body carries at most one file's worth beyond what any other body may carry.
  const formData = multipart(maxFileSize, maxFileSize + parseSize(limit));
  const json = express.json({ limit, strict: false, type: () => true });
  const urlencoded = express.urlencoded({ limit, extended: false, parameterLimit: 10_000, type: () => true });
  const text = express.text({ limit, type: () => true });
  return (req: Request, res: Response, next: NextFunction): void => {
    const length = req.headers['content-length'];
    if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) {
      next();
      return;
    }
    const parse = req.is(['application/json', 'application/*+json'])
      ? json
      : req.is('application/x-www-form-urlencoded')
        ? urlencoded
        : req.is('multipart/form-data')
          ? formData
          : req.is('text/plain')
            ? text
            : undefined;
    if (!parse) {
      next();
      return;
    }
    parse(req, res, (err?: unknown) => next(err === undefined ? undefined : translate(err)));
  };
}

function translate(err: unknown): unknown {
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.parse.failed') return new ValidationError('Invalid JSON in the request body', { title: 'Invalid Request' });
  if (type === 'entity.too.large') return new RequestEntityTooLarge('Request body too large', { title: 'Too Large' });
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return new ValidationError('Unsupported request body encoding', { title: 'Invalid Request' });
  return err;
}
