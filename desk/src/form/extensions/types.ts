import type { ComponentType } from 'react';
import type { DocTypeMeta, DocValues } from '../../meta/types';

/** What a form gives the extension of its DocType. */
export interface FormContext {
  meta: DocTypeMeta;
  /** The document as last loaded or saved (an existing one: extensions act on saved documents). */
  doc: DocValues;
  name: string;
  /** Unsaved changes on the form. */
  dirty: boolean;
  /** Loads the document again (after a method changed it on the server); resolves with it. */
  reload: () => Promise<DocValues | undefined>;
  /** A line for the form's polite status area. */
  notify: (message: string) => void;
  /** An error for the form's error notice. */
  fail: (error: unknown) => void;
}

/**
 * What a DocType adds to its generated form, as Frappe's form scripts (`frappe.ui.form.on`) do:
 * buttons beside Save, a say in what a save sends, and a look at what it answered. Everything
 * else the form draws from metadata alone.
 */
export interface FormExtension {
  /** Buttons (and the dialogs they open) beside the form's own actions, for a saved document. */
  Actions?: ComponentType<FormContext>;
  /** The body of a save, changed before it is sent (e.g. fieldnames derived from labels). */
  beforeSave?: (body: DocValues, meta: DocTypeMeta) => DocValues;
  /**
   * A hook the form calls on every render (so it may use other hooks, e.g. SWR's cache), returning
   * what to do with a save's answer (`isNew`: the save created the document).
   */
  useAfterSave?: () => (saved: DocValues, isNew: boolean) => void;
}

/** What the form calls after a save when its DocType's extension has nothing to do. */
export function noAfterSave(): (saved: DocValues, isNew: boolean) => void {
  return () => undefined;
}
