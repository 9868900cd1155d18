import type { Principal } from '@quire/permissions';
import type { Tenant } from '@quire/tenancy';
import type { Response } from 'express';

/** What the middlewares establish for a request, in order: its id, its tenant, its caller. */
export interface RequestLocals {
  requestId: string;
  tenant: Tenant;
  principal: Principal;
}

export function locals(res: Response): RequestLocals {
  return res.locals as RequestLocals;
}
