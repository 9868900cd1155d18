import { CHILD_FIELDS, OPTIONAL_FIELDS, STANDARD_FIELDS, type Meta, type TenantMeta } from '@quire/meta';
import type { DocData } from './context';

/**
 * Frappe's BaseDocument.as_dict: standard fields, child-link fields, data fields, `doctype`, then
 * each Table field's rows. `/api/resource` omits nulls (as_dict(no_nulls=True)); frappe.client
 * methods keep them. Values are already in wire form (db/types.ts, meta/coerce.ts).
 */

export interface SerializeOptions {
  includeNulls: boolean;
  /** Fields the caller may not read (permlevel). */
  hidden?: ReadonlySet<string>;
}

interface Plan {
  keys: string[];
  optional: string[];
  tables: Array<{ fieldname: string; child: string }>;
}

const plans = new WeakMap<Meta, Plan>();

function planOf(meta: Meta): Plan {
  let plan = plans.get(meta);
  if (!plan) {
    plan = {
      keys: [...STANDARD_FIELDS, ...(meta.istable ? CHILD_FIELDS : []), ...meta.dataFields.map((f) => f.fieldname)],
      optional: meta.istable ? [] : [...OPTIONAL_FIELDS],
      tables: meta.tableFields.map((f) => ({ fieldname: f.fieldname, child: f.options ?? '' })),
    };
    plans.set(meta, plan);
  }
  return plan;
}

export function serializeDoc(tenant: TenantMeta, meta: Meta, doc: DocData, options: SerializeOptions): DocData {
  const plan = planOf(meta);
  const out: DocData = {};
  const hidden = options.hidden;
  for (const key of plan.keys) {
    if (hidden?.has(key)) continue;
    const v = doc[key];
    if (v === undefined || (v === null && !options.includeNulls)) continue;
    out[key] = v;
  }
  // Frappe adds _user_tags, _comments, ... only when they hold something.
  for (const key of plan.optional) if (doc[key]) out[key] = doc[key];
  out.doctype = meta.name;
  for (const { fieldname, child } of plan.tables) {
    if (hidden?.has(fieldname)) continue;
    const childMeta = tenant.get(child);
    const rows = (doc[fieldname] as DocData[] | undefined) ?? [];
    out[fieldname] = childMeta ? rows.map((r) => serializeDoc(tenant, childMeta, r, { includeNulls: options.includeNulls })) : [];
  }
  return out;
}
