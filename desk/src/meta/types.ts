/** The metadata the desk is drawn from, as frappe.desk.form.load.getdoctype answers it. */

/** 0/1 flags, as Frappe sends them. */
export type Flag = 0 | 1;

export interface DocField {
  fieldname: string;
  fieldtype: string;
  label?: string | null;
  options?: string | null;
  reqd?: Flag;
  read_only?: Flag;
  hidden?: Flag;
  in_list_view?: Flag;
  in_standard_filter?: Flag;
  in_global_search?: Flag;
  bold?: Flag;
  allow_on_submit?: Flag;
  permlevel?: number;
  default?: string | null;
  description?: string | null;
  length?: number | null;
}

export type Right = 'select' | 'read' | 'write' | 'create' | 'delete' | 'submit' | 'cancel' | 'amend' | 'report' | 'export';

export interface DocTypeMeta {
  name: string;
  module: string;
  istable: Flag;
  issingle: Flag;
  is_submittable: Flag;
  title_field?: string | null;
  show_title_field_in_link?: Flag;
  search_fields?: string | null;
  sort_field?: string | null;
  sort_order?: string | null;
  autoname?: string | null;
  fields: DocField[];
  /** The caller's rights (Quire's addition to the meta dict). */
  __perm: { rights: Record<Right, boolean>; write_levels: number[] };
}

/** One entry of frappe.desk.desktop.get_readable_doctypes. */
export interface ReadableDoctype {
  name: string;
  module: string;
  issingle: Flag;
  is_submittable: Flag;
  can_create: Flag;
  /** Links to it show the linked document's title instead of its name. */
  show_title_field_in_link: Flag;
}

/** A document as the API sends it: its fields, child rows under Table fields. */
export type DocValues = Record<string, unknown>;
