import type { ActiveSession } from '@quire/auth';
import { localsOf } from '@quire/http';
import type { Platform } from '@quire/tenancy';
import type { Request } from 'express';
import { Strategy } from 'passport-strategy';

/**
 * Cookie sessions (frappe/auth.py::LoginManager resuming `sid`): the `sid` cookie, or a `sid`
 * request parameter as Frappe also accepts. An unknown or expired session is not an error: the
 * request goes on as Guest, told so with `session_expired: 1` (Frappe does the same).
 */
export class SessionStrategy extends Strategy {
  name = 'session';

  constructor(private readonly platform: Platform) {
    super();
  }

  override authenticate(req: Request): void {
    const sid = (req as Request & { sid?: string }).sid ?? '';
    this.platform.sessions.authenticate(localsOf(req).tenant, sid).then(
      (session: ActiveSession | undefined) => (session ? this.success(session) : this.pass()),
      (e: unknown) => this.error(e as Error),
    );
  }
}
