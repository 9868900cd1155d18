import { cstr } from '@quire/frappe-compat';
import type { RequestHandler } from 'express';
import { NOT_OFFERED, type AuthContext } from '../context';
import { formOf } from '../http/request';
import { errorPage } from '../pages';

/** The authorization endpoint offers `response_type=code` only: anything else (implicit) is refused with the reason. */
export function refuseImplicit({ metrics }: AuthContext): RequestHandler {
  return (req, res, next) => {
    const responseType = cstr(req.query.response_type ?? formOf(req).response_type);
    if (responseType && responseType !== 'code') {
      metrics.refused('unsupported_response_type');
      res.status(400).type('html').send(errorPage('unsupported_response_type', NOT_OFFERED));
      return;
    }
    next();
  };
}
