import { doctype } from './doctype';
import { oauthClient } from './oauth-client';
import { rqJob } from './rq-job';
import { noAfterSave, type FormExtension } from './types';
import { user } from './user';
import { webhook, webhookRequestLog } from './webhook';

export type { FormContext, FormExtension } from './types';

/** The DocTypes whose forms do more than their metadata says (Frappe's form scripts). */
const EXTENSIONS: Readonly<Record<string, FormExtension>> = {
  DocType: doctype,
  User: user,
  Webhook: webhook,
  'Webhook Request Log': webhookRequestLog,
  'OAuth Client': oauthClient,
  'RQ Job': rqJob,
};

const NONE: FormExtension = {};

/** A DocType's extension, with `useAfterSave` always present (a form calls it on every render). */
export function formExtensionOf(doctype: string): FormExtension & Required<Pick<FormExtension, 'useAfterSave'>> {
  const found = EXTENSIONS[doctype] ?? NONE;
  return { ...found, useAfterSave: found.useAfterSave ?? noAfterSave };
}
