import { useFrappeCreateDoc, useFrappeGetDoc, useFrappeUpdateDoc, useSWRConfig, type FrappeDoc } from 'frappe-react-sdk';
import { useEffect, useState, type SyntheticEvent } from 'react';
import { useNavigate } from 'react-router';
import { isTable, labelOf } from '../meta/fieldtypes';
import { useMeta } from '../meta/hooks';
import { formPath, listPath, newPath } from '../meta/slug';
import type { DocTypeMeta, DocValues } from '../meta/types';
import { Breadcrumbs } from '../shell/Breadcrumbs';
import type { FlashState } from '../shell/Flash';
import { ErrorNotice, Loading } from '../shell/states';
import { useTitle } from '../shell/useTitle';
import { text } from '../text';
import { Assignees } from './Assignees';
import { ChildTable } from './ChildTable';
import { DeleteDialog } from './DeleteDialog';
import { useDocinfo, useRefreshDocinfo } from './docinfo';
import { formExtensionOf } from './extensions';
import { isTimestampMismatch } from './errors';
import { FieldInput } from './FieldInput';
import { LeaveDialog, useLeaveGuard, useSaveShortcut } from './habits';
import { sectionsOf } from './layout';
import { Timeline } from './Timeline';
import { useLiveDoc } from './useLiveDoc';
import { amendedCopy, isEditable, missingMandatory, newDocValues, saveBody } from './values';
import './timeline.css';

interface Props {
  meta: DocTypeMeta;
  /** The document's name; undefined for a new one. */
  name?: string | undefined;
  /** A new document's starting values (an amendment's copy). */
  initial?: DocValues | undefined;
  /** A message to show first (a new document's "Saved", carried across the move to its own URL). */
  initialNotice?: string | undefined;
}

type Action = 'save' | 'submit' | 'cancel';

/** Frappe's `Prompt` naming ("Set by user"): the name is asked for on a new document. */
const namedByUser = (meta: DocTypeMeta) => meta.autoname?.toLowerCase() === 'prompt';

const isEmpty = (value: unknown) => value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

/** The document's title as Frappe shows it: its title_field's value, else its name. */
function titleOf(meta: DocTypeMeta, doc: DocValues | undefined, name: string): string {
  const value = meta.title_field && doc ? doc[meta.title_field] : undefined;
  return typeof value === 'string' && value.trim() !== '' ? value : typeof value === 'number' ? String(value) : name;
}

/**
 * A form generated from the DocType's meta: its sections and fields, child tables as grids, and
 * the actions the document's state and the user's rights allow (Save, Delete; Submit, Cancel, Amend
 * for submittable DocTypes). Server messages are shown above the fields; a save of a document
 * changed meanwhile (TimestampMismatchError) offers to reload it, and so does a change by someone
 * else seen through realtime before any save. Ctrl+S (Cmd+S) saves; leaving with unsaved changes
 * asks first. A saved document shows its assignees above and its timeline below.
 */
export function FormView({ meta, name, initial, initialNotice }: Props) {
  const isNew = name === undefined;
  const navigate = useNavigate();
  const { childMeta } = useMeta(meta.name);
  const docKey = isNew ? null : `doc:${meta.name}:${name}`;
  const { cache: swrCache } = useSWRConfig();
  const loaded = useFrappeGetDoc<DocValues>(meta.name, name, docKey, {
    revalidateOnFocus: false,
    revalidateIfStale: false,
    shouldRetryOnError: false,
  });
  const [doc, setDoc] = useState<DocValues | undefined>(isNew ? { ...newDocValues(meta), ...initial } : undefined);
  const [dirty, setDirty] = useState(isNew);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(initialNotice ?? null);
  const [busy, setBusy] = useState<Action | null>(null);
  const { createDoc } = useFrappeCreateDoc<DocValues>();
  const { updateDoc } = useFrappeUpdateDoc<DocValues>();
  // The form is keyed by DocType and document (FormPage), so its extension and hooks never change.
  const extension = formExtensionOf(meta.name);
  const afterSave = extension.useAfterSave();
  const refreshDocinfo = useRefreshDocinfo();
  const remote = useLiveDoc(meta.name, name);
  const { docinfo } = useDocinfo(meta.name, name);
  const [deleting, setDeleting] = useState(false);

  const { blocker, markEdited } = useLeaveGuard();
  const saveShortcut = useSaveShortcut();

  // The loaded document becomes the form's state (again after a reload).
  useEffect(() => {
    if (!isNew && loaded.data) {
      setDoc(loaded.data);
      setDirty(false);
      markEdited(false);
    }
  }, [isNew, loaded.data]);

  const title = isNew ? text.form.newTitle(meta.name) : titleOf(meta, doc, name);
  useTitle(title);
  if (!isNew && loaded.error) return <ErrorNotice error={loaded.error} />;
  if (!doc) return <Loading />;

  const docstatus = Number(doc.docstatus ?? 0);
  const rights = meta.__perm.rights;
  const submittable = meta.is_submittable === 1;
  const stale = isTimestampMismatch(error);

  const set = (fieldname: string, value: unknown) => {
    setDoc({ ...doc, [fieldname]: value });
    setDirty(true);
    markEdited(true);
    setNotice(null);
  };

  const run = async (action: Action) => {
    setError(null);
    setNotice(null);
    if (action === 'save') {
      const missing = [...(isNew && namedByUser(meta) && isEmpty(doc.name) ? [text.form.name] : []), ...missingMandatory(meta, doc, labelOf)];
      if (missing.length > 0) {
        setError({ message: text.form.mandatoryMissing(missing) });
        return;
      }
    }
    setBusy(action);
    try {
      let saved: FrappeDoc<DocValues>;
      const body = () => {
        const plain = saveBody(meta, doc, isNew);
        return extension.beforeSave ? extension.beforeSave(plain, meta) : plain;
      };
      if (action === 'save' && isNew) {
        saved = await createDoc(meta.name, body());
      } else if (action === 'save') {
        saved = await updateDoc(meta.name, name ?? null, body());
      } else {
        saved = await updateDoc(meta.name, name ?? null, { modified: doc.modified, docstatus: action === 'submit' ? 1 : 2 });
      }
      afterSave(saved, isNew);
      setDoc(saved);
      setDirty(false);
      markEdited(false);
      if (!isNew) refreshDocinfo(meta.name, saved.name);
      setNotice(action === 'save' ? text.form.saved : action === 'submit' ? text.form.submitted : text.form.cancelled);
      if (isNew) void navigate(formPath(meta.name, saved.name), { replace: true, state: { notice: text.form.saved } });
      else void loaded.mutate(saved, { revalidate: false });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  const reload = async (): Promise<DocValues | undefined> => {
    setError(null);
    const fresh = await loaded.mutate();
    if (fresh) {
      setDoc(fresh);
      setDirty(false);
      markEdited(false);
    }
    return fresh;
  };

  const afterDelete = () => {
    markEdited(false);
    // Gone from the cache and from the history (the list takes its entry): nothing leads back to a copy of it.
    if (docKey) swrCache.delete(docKey);
    const state: FlashState = { flash: text.formPage.deleted(meta.name, title) };
    void navigate(listPath(meta.name), { state, replace: true });
  };

  const amend = () => void navigate(newPath(meta.name), { state: { amend: amendedCopy(meta, doc) } });

  const onSubmit = (e: SyntheticEvent) => {
    e.preventDefault();
    void run('save');
  };

  const canSave = docstatus === 0 ? (isNew ? rights.create : rights.write) : docstatus === 1 && dirty && rights.write;
  saveShortcut.current = () => {
    if (canSave && busy === null && !deleting && blocker.state !== 'blocked') void run('save');
  };
  // Draft, Submitted and Cancelled mean something only where documents are submitted; any form says when it is not saved.
  const status =
    isNew || (dirty && docstatus !== 2)
      ? text.form.notSaved
      : !submittable
        ? null
        : docstatus === 1
          ? text.form.submitted
          : docstatus === 2
            ? text.form.cancelled
            : text.form.draft;
  // Someone else saved after the version on this form (not this form's own save, whose answer is awaited).
  const changedElsewhere = !isNew && busy === null && remote !== undefined && typeof doc.modified === 'string' && remote.modified > doc.modified;

  return (
    <div className="form-page">
      <form className="form" onSubmit={onSubmit} aria-labelledby="form-title" noValidate>
        <Breadcrumbs module={meta.module} doctype={meta.name} document={title} />
        <div className="page-head form-head">
          <h1 id="form-title">{title}</h1>
          {status !== null && <span className={`status status-${dirty || isNew ? 0 : docstatus}`}>{status}</span>}
          <div className="actions">
            {canSave && (
              <button
                type="submit"
                className="button button-primary"
                disabled={busy !== null}
                aria-keyshortcuts="Control+S Meta+S"
                title={text.formPage.shortcutSave}
              >
                {text.form.save}
              </button>
            )}
            {submittable && !isNew && docstatus === 0 && !dirty && rights.submit && (
              <button type="button" className="button button-primary" disabled={busy !== null} onClick={() => void run('submit')}>
                {text.form.submit}
              </button>
            )}
            {submittable && docstatus === 1 && !dirty && rights.cancel && (
              <button type="button" className="button" disabled={busy !== null} onClick={() => void run('cancel')}>
                {text.form.cancel}
              </button>
            )}
            {submittable && docstatus === 2 && rights.amend && rights.create && (
              <button type="button" className="button button-primary" onClick={amend}>
                {text.form.amend}
              </button>
            )}
            {name !== undefined && extension.Actions && (
              <extension.Actions meta={meta} doc={doc} name={name} dirty={dirty} reload={reload} notify={setNotice} fail={setError} />
            )}
            {/* A Single is one record, which Frappe never deletes. */}
            {name !== undefined && rights.delete && meta.issingle !== 1 && (
              <button type="button" className="button" disabled={busy !== null} onClick={() => setDeleting(true)}>
                {text.formPage.delete}
              </button>
            )}
          </div>
        </div>
        {name !== undefined && <Assignees doctype={meta.name} name={name} canAssign={rights.write} notify={setNotice} />}
        {typeof doc.amended_from === 'string' && isNew && <p className="hint">{text.form.amendedFrom(doc.amended_from)}</p>}
        <div aria-live="polite" className="live">
          {busy === 'save' && <p className="state">{text.form.saving}</p>}
          {notice && <p className="notice notice-ok">{notice}</p>}
        </div>
        {changedElsewhere && !stale && (
          <div className="notice live-changed" role="alert">
            <p>
              <strong>{text.formPage.changedBy(remote.user ? (docinfo?.fullNames[remote.user] ?? remote.user) : text.formPage.someone)}</strong>{' '}
              {dirty && text.formPage.changedByHint}
            </p>
            <button type="button" className="button" onClick={() => void reload()}>
              {text.form.reload}
            </button>
          </div>
        )}
        {stale && (
          <div className="notice notice-error" role="alert">
            <p>{text.form.stale}</p>
            <button type="button" className="button" onClick={() => void reload()}>
              {text.form.reload}
            </button>
          </div>
        )}
        {error !== null && !stale && <ErrorNotice error={error} title={text.form.errorsTitle} />}

        {isNew && namedByUser(meta) && (
          <section className="card form-section" aria-label={text.form.name}>
            <div className="form-grid">
              <FieldInput
                id="field-__newname"
                field={{ fieldname: '__newname', fieldtype: 'Data', label: text.form.name, reqd: 1 }}
                value={doc.name}
                doc={doc}
                readOnly={false}
                onChange={(v) => set('name', v)}
              />
            </div>
          </section>
        )}
        {sectionsOf(meta.fields).map((section) => (
          <section key={section.key} className="card form-section" aria-label={section.label ?? undefined}>
            {section.label && <h2>{section.label}</h2>}
            <div className="form-grid">
              {section.fields.map((field) => {
                const id = `field-${field.fieldname}`;
                if (field.fieldtype === 'Heading') return <h3 key={field.fieldname}>{labelOf(field)}</h3>;
                // As in Frappe: a read-only field with nothing in it is left out.
                if (field.read_only === 1 && isEmpty(doc[field.fieldname])) return null;
                if (isTable(field)) {
                  return (
                    <ChildTable
                      key={field.fieldname}
                      id={id}
                      field={field}
                      childMeta={field.options ? childMeta(field.options) : undefined}
                      rows={Array.isArray(doc[field.fieldname]) ? (doc[field.fieldname] as DocValues[]) : []}
                      readOnly={!isEditable(meta, field, docstatus, isNew)}
                      docstatus={docstatus}
                      isNew={isNew}
                      onChange={(rows) => set(field.fieldname, rows)}
                    />
                  );
                }
                return (
                  <FieldInput
                    key={field.fieldname}
                    id={id}
                    field={field}
                    value={doc[field.fieldname]}
                    doc={doc}
                    readOnly={!isEditable(meta, field, docstatus, isNew)}
                    onChange={(v) => set(field.fieldname, v)}
                  />
                );
              })}
            </div>
          </section>
        ))}
      </form>
      {name !== undefined && <Timeline meta={meta} childMeta={childMeta} name={name} />}
      {deleting && name !== undefined && (
        <DeleteDialog doctype={meta.name} name={name} title={title} onDeleted={afterDelete} onClose={() => setDeleting(false)} />
      )}
      <LeaveDialog blocker={blocker} />
    </div>
  );
}
