import { ValidationError } from '@quire/errors';
import { decodeJsonArg, mergeFormFields } from '@quire/frappe-compat';
import type { Request } from 'express';
import { mediaTypeOf } from './json-body';

export type FormDict = Record<string, unknown>;

function hasJsonBody(req: Request): boolean {
  return req.body !== undefined && mediaTypeOf(req) === 'application/json';
}

/**
 * Frappe's make_form_dict: a non-empty JSON body replaces the query string (an array body becomes
 * `data`, a scalar is refused); otherwise query string and form fields are merged, form fields
 * winning. Repeated keys keep their first value, except `key[]` (axios) which keeps them all.
 */
export function formDict(req: Request): FormDict {
  if (hasJsonBody(req)) {
    const body: unknown = req.body;
    if (Array.isArray(body)) return { data: body };
    if (body !== null && typeof body === 'object') return { ...(body as FormDict) };
    throw new ValidationError('Invalid request arguments', { title: 'Invalid Request' });
  }
  const out: FormDict = {};
  mergeFormFields(out, req.query);
  if (req.body !== null && typeof req.body === 'object' && !Buffer.isBuffer(req.body)) mergeFormFields(out, req.body as Record<string, unknown>);
  if (out._ !== undefined) delete out._; // jQuery's cache-buster; deleting only when present keeps `out` a fast object
  return out;
}

/**
 * The document in a create/update request (get_request_form_data): the `data` field (JSON) when
 * present, else the JSON body (also a JSON text sent as text/plain), else the form fields.
 */
export function requestDocument(req: Request, fd: FormDict): Record<string, unknown> {
  let data: unknown = fd.data;
  if (data === undefined) {
    if (typeof req.body === 'string') data = req.body.trim() === '' ? {} : decodeJsonArg('the request body', req.body);
    else data = fd;
  } else if (typeof data === 'string') {
    data = decodeJsonArg('data', data);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ValidationError('The document must be a JSON object', { title: 'Invalid Request' });
  }
  return data as Record<string, unknown>;
}
