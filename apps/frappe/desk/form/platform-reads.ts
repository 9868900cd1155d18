import { getList, type DocContext } from '@quire/documents';
import { ADMINISTRATOR, makePrincipal } from '@quire/permissions';
import type { ListParams } from '@quire/query';

/**
 * Frappe's frappe.get_all for the form's side records (ToDos, Comments, Versions, Files of one
 * document): read through the list compiler with the platform's rights, once the caller's right to
 * read that document has been settled.
 */
const PLATFORM = makePrincipal(ADMINISTRATOR, ['Administrator', 'System Manager']);

export function platformList(ctx: DocContext, doctype: string, params: ListParams, maxPageLength: number): Promise<Array<Record<string, unknown>>> {
  return getList({ ...ctx, principal: PLATFORM }, doctype, params, maxPageLength) as Promise<Array<Record<string, unknown>>>;
}
