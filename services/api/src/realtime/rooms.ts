/**
 * Frappe's realtime rooms (realtime/handlers.js), within a tenant's namespace. A DocType's list
 * room comes in two: readers of every row, and per owner for callers who may read only their own
 * rows (if_owner), so a list_update never reaches a socket whose user may not read the document.
 */
export const rooms = {
  user: (user: string) => `user:${user}`,
  all: 'all',
  doctype: (doctype: string) => `doctype:${doctype}`,
  doctypeOwned: (doctype: string, owner: string) => `doctype:${doctype}:owner:${owner}`,
  doc: (doctype: string, name: string) => `doc:${doctype}/${name}`,
  openDoc: (doctype: string, name: string) => `open_doc:${doctype}/${name}`,
} as const;
