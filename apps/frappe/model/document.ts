import { whitelistDocMethod } from '@quire/apps';
import { updateDoc } from '@quire/documents';

/**
 * Methods every document has (frappe/model/document.py's whitelisted submit and cancel), called as
 * `POST /api/resource/<DocType>/<name>` with `{"run_method": "submit"}`.
 */
export const documentMethods = {
  submit: whitelistDocMethod((doc, _args, ctx) => updateDoc(ctx.doc, String(doc.doctype), doc.name, { docstatus: 1 }).then(() => undefined), {
    methods: ['POST'],
  }),
  cancel: whitelistDocMethod((doc, _args, ctx) => updateDoc(ctx.doc, String(doc.doctype), doc.name, { docstatus: 2 }).then(() => undefined), {
    methods: ['POST'],
  }),
};
