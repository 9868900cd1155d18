import { RequestEntityTooLarge, ValidationError } from '@quire/errors';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/**
 * Request bodies: JSON (any JSON value; scalars are refused later), form fields, and text (a JSON
 * document sent as text/plain still works for create/update, as in Frappe). Malformed JSON is a
 * 417 and an oversized body a 413, both in Frappe's envelope.
 */
export function bodyParsers(limit: string): RequestHandler[] {
  const parsers = [
    express.json({ limit, strict: false, type: ['application/json', 'application/*+json'] }),
    express.urlencoded({ limit, extended: false, parameterLimit: 10_000 }),
    express.text({ limit, type: 'text/plain' }),
  ];
  return parsers.map((parse) => (req: Request, res: Response, next: NextFunction) => {
    parse(req, res, (err?: unknown) => next(err === undefined ? undefined : translate(err)));
  });
}

function translate(err: unknown): unknown {
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.parse.failed') return new ValidationError('Invalid JSON in the request body', { title: 'Invalid Request' });
  if (type === 'entity.too.large') return new RequestEntityTooLarge('Request body too large', { title: 'Too Large' });
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new ValidationError('Unsupported request body encoding', { title: 'Invalid Request' });
  if (type === 'request.aborted') return err;
  return err;
}
