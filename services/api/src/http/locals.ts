import type { UploadedFile } from '@quire/apps';
import type { ActiveSession } from '@quire/auth';
import type { Principal } from '@quire/permissions';

/**
 * What the API's middlewares leave on `res.locals` for a request, in order, besides its id and
 * tenant (@quire/http): its caller, its session, its uploaded files.
 */
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- express types request state through this global namespace
  namespace Express {
    interface Locals {
      principal: Principal;
      /** The cookie session the caller resumed, if any. */
      session?: ActiveSession;
      /** Keys added to every JSON body of this response (Frappe's `session_expired`). */
      bodyExtras?: Record<string, unknown>;
      /** multipart uploads, buffered. */
      files?: UploadedFile[];
      /** Set for /api/v2/…: bodies, messages and errors take v2's shapes. */
      apiVersion?: 'v2';
    }
  }
}

export {};
