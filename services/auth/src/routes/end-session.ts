import { endSession } from '@quire/auth';
import { requestCookies } from '@quire/http';
import type { RequestHandler } from 'express';
import type { AuthContext } from '../context';
import { formOf } from '../http/request';

/**
 * Signing out at the issuer (RP-initiated logout, confirmed on its page) also ends the site
 * session the login page opened or reused, once oidc-provider has accepted the confirmation.
 */
export function endSiteSessionOnSignOut({ platform, logger }: AuthContext): RequestHandler {
  return (req, res, next) => {
    const { tenant } = res.locals;
    const sid = requestCookies(req).sid;
    if (formOf(req).logout === 'yes' && sid && sid !== 'Guest') {
      res.once('finish', () => {
        if (res.statusCode < 300 || res.statusCode >= 400) return; // refused: its xsrf check failed
        endSession(platform.db, tenant, platform.changes, sid).catch((e: unknown) => logger.warn({ err: e }, 'could not end the site session at sign-out'));
      });
    }
    next();
  };
}
