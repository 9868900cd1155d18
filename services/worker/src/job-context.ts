import type { MethodContext, MethodResponse, MethodSettings } from '@quire/apps';
import { loadPrincipal } from '@quire/auth';
import { jobEnqueueing } from '@quire/documents';
import type { Platform } from '@quire/tenancy';

/** What a job may do with a response it does not have: nothing (a msgprint from a job is not shown to anyone). */
const NO_RESPONSE: MethodResponse = {
  set: () => {},
  setCookie: () => {},
  clearCookie: () => {},
  status: () => {},
  msgprint: () => {},
  download: () => {},
};

/**
 * The context a job runs with: the one a whitelisted method gets, as the tenant and user who
 * enqueued it (their roles as they are now), with no HTTP request behind it. Undefined when the
 * tenant was dropped or the user deleted since.
 */
export function jobContexts(platform: Platform, settings: MethodSettings): (tenant: string, user: string) => Promise<MethodContext | undefined> {
  return async (name, user) => {
    const tenant = platform.tenants.get(name) ?? (await platform.tenants.refreshOne(name), platform.tenants.get(name));
    if (!tenant) return undefined;
    const principal = await loadPrincipal(platform.dbOf(tenant), tenant.schema, user);
    if (!principal) return undefined;
    const doc = await platform.context(tenant, principal);
    const ctx: MethodContext = {
      ...jobEnqueueing(() => ctx.doc),
      doc,
      siteUrl: platform.siteUrl(tenant),
      verb: 'POST',
      settings,
      request: { ip: '127.0.0.1', headers: {}, files: [], sessionId: undefined },
      response: NO_RESPONSE,
    };
    return ctx;
  };
}
