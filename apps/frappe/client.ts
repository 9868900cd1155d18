import { whitelist, type MethodArgs } from '@quire/apps';
import { getCount, getList } from '@quire/documents';
import { ValidationError } from '@quire/errors';

/** frappe.client: the generic document methods clients call over /api/method. */

function doctypeArg(args: MethodArgs): string {
  const doctype = args.doctype;
  if (typeof doctype !== 'string' || doctype === '') throw new ValidationError('doctype is required', { title: 'Missing Argument' });
  return doctype;
}

/** get_count(doctype, filters=None): rows the caller may read that match the filters. */
export const get_count = whitelist((args, ctx) =>
  getCount(ctx.doc, doctypeArg(args), { filters: args.filters, or_filters: args.or_filters, parent: args.parent }),
);

/** get_list(doctype, fields, filters, group_by, order_by, limit_start, limit_page_length=20, parent, as_dict, or_filters). */
export const get_list = whitelist((args, ctx) =>
  getList(
    ctx.doc,
    doctypeArg(args),
    {
      fields: args.fields,
      filters: args.filters,
      or_filters: args.or_filters,
      order_by: args.order_by,
      group_by: args.group_by,
      limit_start: args.limit_start,
      limit_page_length: args.limit_page_length ?? args.limit ?? 20,
      as_dict: args.as_dict,
      parent: args.parent,
    },
    ctx.settings.maxPageLength,
  ),
);
