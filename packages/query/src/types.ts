import type { Meta, TenantMeta } from '@quire/meta';
import type { Principal } from '@quire/permissions';
import type { RowPredicate } from './permission';

/** Raw list parameters as they arrive: strings from a query string/form, or parsed JSON values from a JSON body (see parseListRequest). */
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

/** A list request decoded and checked at the edge (parseListRequest): what the compiler takes. */
export interface ListRequest {
  /** `fields` entries, still expressions (`name`, `count(name) as n`, `child.col`); default `["name"]`. */
  readonly fields: readonly string[];
  readonly filters: readonly FilterSpec[];
  readonly orFilters: readonly FilterSpec[];
  /** order_by items (`modified desc`); undefined means the DocType's default order. */
  readonly orderBy: readonly string[] | undefined;
  readonly groupBy: readonly string[] | undefined;
  readonly start: number;
  /** Rows asked for; 0 means all (up to the server's cap). */
  readonly pageLength: number;
  readonly asDict: boolean;
}

/** One filter as the client wrote it: `doctype` only for the 4-element form. */
export interface FilterSpec {
  doctype?: string;
  field: string;
  operator: string;
  value: unknown;
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

/** What compiling a typed request needs besides the request: the caller's row predicate, decided first. */
export interface CompileRequestContext extends CompileContext {
  rows: RowPredicate;
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
