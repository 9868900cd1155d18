import { ValidationError } from '@quire/errors';
import type { Meta } from '@quire/meta';
import { checkPermission } from '@quire/permissions';
import type { ListParams } from '@quire/query';
import type { DocContext, DocData } from './context';

/**
 * A virtual DocType's records (Frappe's is_virtual: get_list, get_count, load_from_db, delete):
 * read from somewhere other than a table of the tenant's schema. Its controller module exports it
 * as `virtual`; the document functions call it after the caller's permission on the DocType is
 * settled, so it only reads this tenant's records and applies the parameters it supports (a
 * parameter it cannot apply is a ValidationError, not ignored).
 */
export interface VirtualDocType {
  getList(ctx: DocContext, params: ListParams, maxPageLength: number): Promise<DocData[]>;
  getCount(ctx: DocContext, params: Pick<ListParams, 'filters' | 'or_filters'>): Promise<number>;
  /** The record, or undefined (a 404). */
  getDoc(ctx: DocContext, name: string): Promise<DocData | undefined>;
  /** Without it, deleting is refused. */
  deleteDoc?(ctx: DocContext, name: string): Promise<void>;
}

export function isVirtualDocType(value: unknown): value is VirtualDocType {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<Record<keyof VirtualDocType, unknown>>;
  return typeof v.getList === 'function' && typeof v.getCount === 'function' && typeof v.getDoc === 'function';
}

/** The virtual DocType's reader, once the caller may `right` it. */
export function virtualOf(ctx: DocContext, meta: Meta, right: 'read' | 'delete'): VirtualDocType {
  checkPermission(meta, ctx.principal, right);
  const source = ctx.controllers.virtualOf(meta.name);
  if (!source) throw new ValidationError(`${meta.name} is virtual and no app provides its records`, { title: 'Virtual DocType' });
  return source;
}

export function refuseVirtualWrite(meta: Meta): never {
  throw new ValidationError(`${meta.name} is virtual: its records cannot be written here`, { title: 'Virtual DocType' });
}
