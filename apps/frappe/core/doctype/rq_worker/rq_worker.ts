import type { DocData, VirtualDocType } from '@quire/documents';
import { liveWorker, liveWorkers } from '@quire/jobs';
import { parseListRequest } from '@quire/query';

/**
 * RQ Worker (virtual): the live workers serving this site's cluster, from their heartbeats. The
 * counts are the worker's, over every tenant it ran jobs for (as Frappe's are over the bench).
 * Not filtered: a handful of rows.
 */
export const virtual: VirtualDocType = {
  async getList(ctx, params) {
    const request = parseListRequest(params);
    const rows = (await liveWorkers(ctx.db)) as unknown as DocData[];
    const wanted = request.fields.includes('*') ? undefined : request.fields;
    const page = request.pageLength > 0 ? rows.slice(request.start, request.start + request.pageLength) : rows.slice(request.start);
    return page.map((r) => (wanted ? Object.fromEntries(wanted.map((f) => [f, r[f] ?? null])) : r));
  },
  async getCount(ctx) {
    return (await liveWorkers(ctx.db)).length;
  },
  async getDoc(ctx, name) {
    const worker = await liveWorker(ctx.db, name);
    return worker ? { ...worker, doctype: 'RQ Worker' } : undefined;
  },
};
