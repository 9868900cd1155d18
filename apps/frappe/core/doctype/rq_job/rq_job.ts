import { whitelist } from '@quire/apps';
import { doesNotExist } from '@quire/errors';
import { checkPermission } from '@quire/permissions';
import type { DocContext, VirtualDocType } from '@quire/documents';
import { cancelTenantJob, countTenantJobs, deleteTenantJob, getTenantJob, listTenantJobs, retryTenantJob, type JobFilter } from '@quire/jobs';
import { parseListRequest, type ListRequest } from '@quire/query';

/**
 * RQ Job (virtual): the site's own background jobs from `quire.jobs` on its cluster, listed, counted
 * and read through /api/resource like any DocType (System Manager), filtered by status, queue or
 * job_name; `retry_job` and `cancel_job`, DELETE for an ended one.
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

/** A job's action as a whitelisted method (Frappe's RQ Job has stop_job): POST, with `name`, for those who may write RQ Job. */
const jobAction = (action: (ctx: DocContext, id: string) => Promise<void>) =>
  whitelist(
    async (args, ctx) => {
      checkPermission(ctx.doc.meta.require('RQ Job'), ctx.doc.principal, 'write');
      const name = typeof args.name === 'string' ? args.name : '';
      if (!(await getTenantJob(ctx.doc.db, ctx.doc.tenant.name, name))) throw doesNotExist('RQ Job', name);
      await action(ctx.doc, name);
    },
    { methods: ['POST'] },
  );

/** frappe.core.doctype.rq_job.rq_job.retry_job(name): a failed or canceled job queued again. */
export const retry_job = jobAction((ctx, id) => retryTenantJob(ctx.db, ctx.tenant.name, id));

/** frappe.core.doctype.rq_job.rq_job.cancel_job(name): a queued job that will not run. */
export const cancel_job = jobAction((ctx, id) => cancelTenantJob(ctx.db, ctx.tenant.name, id));
