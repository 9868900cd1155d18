import { whitelistDocMethod } from '@quire/apps';
import type { DocContext, VirtualDocType } from '@quire/documents';
import { cancelTenantJob, countTenantJobs, deleteTenantJob, getTenantJob, listTenantJobs, retryTenantJob, type JobFilter } from '@quire/jobs';
import { parseListRequest, type ListRequest } from '@quire/query';

/**
 * RQ Job (virtual): the site's own background jobs from `quire.jobs` on its cluster, listed, counted
 * and read through /api/resource like any DocType (System Manager), filtered by status, queue or
 * job_name; `retry` and `cancel` as document methods, DELETE for an ended one.
 */

function filtersOf(request: Pick<ListRequest, 'filters'>): JobFilter[] {
  return request.filters.map((f) => ({ field: f.field, operator: f.operator, value: f.value }));
}

export const virtual: VirtualDocType = {
  async getList(ctx, params, maxPageLength) {
    const request = parseListRequest(params);
    const rows = await listTenantJobs(ctx.db, ctx.tenant.name, {
      filters: filtersOf(request),
      orderBy: request.orderBy?.[0],
      start: request.start,
      pageLength: request.pageLength,
      max: maxPageLength,
    });
    // The fields asked for (every field with `*`), as a list of a table-backed DocType answers.
    const wanted = request.fields.includes('*') ? undefined : request.fields.map((f) => f.replace(/^`?tabRQ Job`?\./, '').replace(/`/g, ''));
    return rows.map((r) => (wanted ? Object.fromEntries(wanted.map((f) => [f, (r as unknown as Record<string, unknown>)[f] ?? null])) : { ...r }));
  },
  getCount: (ctx, params) => countTenantJobs(ctx.db, ctx.tenant.name, filtersOf(parseListRequest(params))),
  async getDoc(ctx, name) {
    const job = await getTenantJob(ctx.db, ctx.tenant.name, name);
    return job ? { ...job, doctype: 'RQ Job' } : undefined;
  },
  deleteDoc: (ctx, name) => deleteTenantJob(ctx.db, ctx.tenant.name, name),
};

const jobAction = (action: (ctx: DocContext, id: string) => Promise<void>) =>
  whitelistDocMethod(async (doc, _args, ctx) => action(ctx.doc, String(doc.name)), { methods: ['POST'] });

export const methods = {
  retry: jobAction((ctx, id) => retryTenantJob(ctx.db, ctx.tenant.name, id)),
  cancel: jobAction((ctx, id) => cancelTenantJob(ctx.db, ctx.tenant.name, id)),
};
