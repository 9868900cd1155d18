import type { DocField, DocTypeDefinition } from './definition';

/**
 * Owner fields: Link-to-User fields whose user a document also belongs to, beside its `owner`,
 * wherever a DocPerm row says `if_owner`. An app declares them in its hooks (`ownerFields`, the
 * structured form of what Frappe's ToDo says in code with has_permission and
 * permission_query_conditions: a ToDo is its assignee's and its assigner's too). They are kept on
 * the DocType's Meta so the document checks (@quire/permissions) and the list compiler's row
 * conditions (@quire/query) read the same rule.
 */

/** Owner fields by DocType, as the loaded apps declare them. */
export type OwnerFields = ReadonlyMap<string, readonly string[]>;

export const NO_OWNER_FIELDS: OwnerFields = new Map();

/** A field that can name a user in a row: a Link to User with a column (not virtual). */
function namesUser(f: DocField | undefined): boolean {
  return f !== undefined && f.fieldtype === 'Link' && f.options === 'User' && !f.is_virtual;
}

/**
 * The declared fieldnames split by whether `def` has them as stored Links to User: only those
 * may widen `if_owner` (anything else cannot name a user, and every one becomes a SQL column).
 */
export function checkOwnerFields(def: DocTypeDefinition, declared: readonly string[]): { valid: string[]; invalid: string[] } {
  const valid: string[] = [];
  const invalid: string[] = [];
  for (const fieldname of new Set(declared)) {
    if (namesUser(def.fields.find((f) => f.fieldname === fieldname))) valid.push(fieldname);
    else invalid.push(fieldname);
  }
  return { valid, invalid };
}
