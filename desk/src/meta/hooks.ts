import { useFrappeGetCall } from 'frappe-react-sdk';
import { slugOf } from './slug';
import type { DocTypeMeta, ReadableDoctype } from './types';

/** Metadata changes rarely within a page's life: fetched once, not on focus or reconnect. */
const ONCE = { revalidateOnFocus: false, revalidateIfStale: false } as const;

/** The DocTypes the user may read (frappe.desk.desktop.get_readable_doctypes). */
export function useReadableDoctypes() {
  const res = useFrappeGetCall<{ message: ReadableDoctype[] }>('frappe.desk.desktop.get_readable_doctypes', undefined, undefined, ONCE);
  return { doctypes: res.data?.message, error: res.error as unknown, isLoading: res.isLoading };
}

/** The DocType a route's slug names (`todo` -> ToDo), among those the user may read. */
export function useDoctypeOfSlug(slug: string) {
  const { doctypes, error, isLoading } = useReadableDoctypes();
  const doctype = doctypes?.find((d) => slugOf(d.name) === slug);
  return { doctype, error, isLoading, known: doctypes !== undefined };
}

/** A DocType's meta and its child tables' (frappe.desk.form.load.getdoctype). */
export function useMeta(doctype: string | undefined) {
  const res = useFrappeGetCall<{ docs: DocTypeMeta[] }>(
    'frappe.desk.form.load.getdoctype',
    doctype ? { doctype } : undefined,
    doctype ? `meta:${doctype}` : null,
    ONCE,
  );
  const docs = res.data?.docs;
  return {
    meta: docs?.[0],
    childMeta: (name: string) => docs?.find((d) => d.name === name),
    error: res.error as unknown,
    isLoading: res.isLoading,
  };
}

/**
 * The title a Link value shows instead of its name, when its DocType sets `show_title_field_in_link`
 * (frappe.desk.search.get_link_title, asked once per value and only for such DocTypes).
 */
export function useLinkTitle(doctype: string | undefined, name: unknown): string | undefined {
  const { doctypes } = useReadableDoctypes();
  const wanted =
    doctype !== undefined && typeof name === 'string' && name !== '' && doctypes?.some((d) => d.name === doctype && d.show_title_field_in_link === 1);
  const res = useFrappeGetCall<{ message?: unknown }>(
    'frappe.desk.search.get_link_title',
    wanted ? { doctype, docname: name } : undefined,
    wanted ? `link-title:${doctype}:${name}` : null,
    ONCE,
  );
  const title = res.data?.message;
  return typeof title === 'string' || typeof title === 'number' ? String(title) : undefined;
}
