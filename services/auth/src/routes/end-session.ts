import { endSession } from '@quire/auth';
import { requestCookies } from '@quire/http';
import type { RequestHandler } from 'express';
import { tenantStore } from '../adapter';
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
        // Async from the start: finding the tenant's cluster may throw too, and nothing here may.
        const end = async () => endSession(tenantStore(platform, tenant).db(), tenant, platform.changes, sid);
        end().catch((e: unknown) => logger.warn({ err: e }, 'could not end the site session at sign-out'));
      });
    }
    next();
  };
}
