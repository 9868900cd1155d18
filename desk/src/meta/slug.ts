/** Frappe's route slug of a DocType: `Webhook Request Log` -> `webhook-request-log`. */
export function slugOf(doctype: string): string {
  return doctype.toLowerCase().replace(/ /g, '-');
}

export function listPath(doctype: string): string {
  return `/app/${slugOf(doctype)}`;
}

export function formPath(doctype: string, name: string): string {
  return `/app/${slugOf(doctype)}/${encodeURIComponent(name)}`;
}

export function newPath(doctype: string): string {
  return `/app/${slugOf(doctype)}/new`;
}
