import { useFrappeGetCall, useSWRConfig } from 'frappe-react-sdk';
import { useCallback } from 'react';

/**
 * A document's docinfo as Frappe's frappe.desk.form.load.get_docinfo answers it (in `docinfo`, not
 * `message`): what the form's timeline, assignees and attachments are drawn from.
 */

export interface VersionEntry {
  name: string;
  owner: string;
  creation: string;
  /** JSON of Frappe's diff: changed, added, removed, row_changed. */
  data: string;
}

export interface CommentEntry {
  name: string;
  creation: string;
  content: string | null;
  owner: string;
  comment_type?: string;
  comment_email?: string | null;
  comment_by?: string | null;
}

export interface AssignmentEntry {
  name: string;
  /** The assignee (the ToDo's allocated_to). */
  owner: string;
  description?: string | null;
  status?: string | null;
}

export interface AttachmentEntry {
  name: string;
  file_name: string | null;
  file_url: string | null;
  is_private: 0 | 1 | boolean;
  creation?: string;
}

export interface Docinfo {
  versions: VersionEntry[];
  comments: CommentEntry[];
  /** What the platform noted itself (comment types Assigned, Attachment, Info…): its words in `content`. */
  logs: CommentEntry[];
  assignments: AssignmentEntry[];
  attachments: AttachmentEntry[];
  /** Full names of the users named above (Frappe's add_user_info). */
  fullNames: Record<string, string>;
}

const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

/** The parts of the answer the desk uses; a key the server leaves out reads as empty. */
export function parseDocinfo(raw: unknown): Docinfo {
  const info = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  return {
    versions: list<VersionEntry>(info.versions),
    comments: list<CommentEntry>(info.comments),
    logs: ['assignment_logs', 'attachment_logs', 'info_logs'].flatMap((key) => list<CommentEntry>(info[key])),
    assignments: list<AssignmentEntry>(info.assignments),
    attachments: list<AttachmentEntry>(info.attachments),
    fullNames: fullNamesOf(info.user_info),
  };
}

function fullNamesOf(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof raw !== 'object' || raw === null) return out;
  for (const [user, info] of Object.entries(raw as Record<string, unknown>)) {
    const fullname = typeof info === 'object' && info !== null ? (info as { fullname?: unknown }).fullname : undefined;
    if (typeof fullname === 'string' && fullname !== '') out[user] = fullname;
  }
  return out;
}

const keyOf = (doctype: string, name: string) => `docinfo:${doctype}:${name}`;

/** The document's docinfo, shared by every part of the form that shows some of it (one request); none for a new document. */
export function useDocinfo(doctype: string, name: string | undefined) {
  const res = useFrappeGetCall<{ docinfo?: unknown }>(
    'frappe.desk.form.load.get_docinfo',
    { doctype, name },
    name === undefined ? null : keyOf(doctype, name),
    {
      revalidateOnFocus: false,
      shouldRetryOnError: false,
    },
  );
  return {
    docinfo: res.data ? parseDocinfo(res.data.docinfo) : undefined,
    error: res.error as unknown,
    isLoading: res.isLoading,
    refresh: res.mutate,
  };
}

/** Asks for a document's docinfo again (after a save, which may have written a Version). */
export function useRefreshDocinfo() {
  const { mutate } = useSWRConfig();
  return useCallback((doctype: string, name: string) => void mutate(keyOf(doctype, name)), [mutate]);
}
