import type { Meta, TenantMeta } from '@quire/meta';
import type { Principal } from '@quire/permissions';

/** Raw list parameters as they arrive: strings from a query string/form, or parsed JSON values from a JSON body. */
export interface ListParams {
  fields?: unknown;
  filters?: unknown;
  or_filters?: unknown;
  order_by?: unknown;
  group_by?: unknown;
  limit_start?: unknown;
  limit_page_length?: unknown;
  limit?: unknown;
  as_dict?: unknown;
  /** Required when listing a child-table DocType (meta.istable): the parent DocType name. */
  parent?: unknown;
}

export interface CompileContext {
  meta: Meta;
  tenant: TenantMeta;
  principal: Principal;
  /** Server cap: a requested page length above it (or 0 = "all") is clamped to it. */
  maxPageLength: number;
  /** 'YYYY-MM-DD' override for timespan tests; default today() (UTC). */
  today?: string;
}

export interface CompiledQuery {
  text: string;
  values: unknown[];
}

export interface CompiledList extends CompiledQuery {
  /** The as_dict parameter (default true). */
  asDict: boolean;
  /** Output keys in `fields` order (for as_dict=false rows become arrays in this order). */
  keys: string[];
}
