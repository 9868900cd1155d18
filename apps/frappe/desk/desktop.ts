import { whitelist } from '@quire/apps';
import { grantsOf, readScope } from '@quire/permissions';

/**
 * frappe.desk.desktop.get_readable_doctypes: the DocTypes the caller may read (child tables left
 * out: they are edited inside their parents), for the desk's home page, ordered by module then
 * name. Frappe's desk learns the same from `frappe.boot.user.can_read`.
 */
export interface ReadableDoctype {
  name: string;
  module: string;
  issingle: 0 | 1;
  is_submittable: 0 | 1;
  can_create: 0 | 1;
  /** Links to it show the linked document's title (Frappe's boot `doctypes_with_show_link_field_title`). */
  show_title_field_in_link: 0 | 1;
}

export const get_readable_doctypes = whitelist(
  (_args, ctx): ReadableDoctype[] => {
    const { meta: tenant, principal } = ctx.doc;
    const out: ReadableDoctype[] = [];
    for (const meta of tenant.all()) {
      if (meta.istable || readScope(meta, principal) === false) continue;
      out.push({
        name: meta.name,
        module: meta.definition.module,
        issingle: meta.issingle ? 1 : 0,
        is_submittable: meta.isSubmittable ? 1 : 0,
        can_create: grantsOf(meta, principal).create === false ? 0 : 1,
        show_title_field_in_link: meta.definition.show_title_field_in_link && meta.titleField ? 1 : 0,
      });
    }
    return out.sort((a, b) => a.module.localeCompare(b.module) || a.name.localeCompare(b.name));
  },
  { methods: ['GET'] },
);
