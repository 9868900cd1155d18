import { useFrappeDocumentEventListener, useFrappeEventListener, useFrappeGetCall } from 'frappe-react-sdk';
import { useCallback, useState } from 'react';
import { useRefreshDocinfo } from './docinfo';

/** A save of the open document seen through realtime: when, and by whom (its modified_by). */
export interface RemoteChange {
  modified: string;
  user: string | undefined;
}

interface DocUpdate {
  doctype?: unknown;
  name?: unknown;
  modified?: unknown;
}

/**
 * The open document as others change it: the form subscribes to its room (doc_subscribe; doc_open
 * tells others who is looking), and each `doc_update` for it asks who saved (frappe.client.get_value
 * of modified, modified_by) and has the timeline asked for again, as has each `docinfo_update`
 * (a comment, an assignment). The form compares the answer's `modified` with its own to say "…
 * changed this document" before the user's save is refused.
 */
export function useLiveDoc(doctype: string, name: string | undefined): RemoteChange | undefined {
  const [seen, setSeen] = useState<string | undefined>(undefined);
  const refreshDocinfo = useRefreshDocinfo();
  const onUpdate = useCallback(
    (event: DocUpdate) => {
      if (name === undefined || event.doctype !== doctype || event.name !== name) return;
      if (typeof event.modified === 'string') setSeen(event.modified);
      refreshDocinfo(doctype, name);
    },
    [doctype, name, refreshDocinfo],
  );
  // A new document has no room yet: the hook subscribes to a name nobody can have.
  useFrappeDocumentEventListener(doctype, name ?? '', onUpdate, name !== undefined);
  const onDocinfo = useCallback(() => {
    if (name !== undefined) refreshDocinfo(doctype, name);
  }, [doctype, name, refreshDocinfo]);
  useFrappeEventListener('docinfo_update', onDocinfo);

  const who = useFrappeGetCall<{ message?: { modified?: string; modified_by?: string } }>(
    'frappe.client.get_value',
    { doctype, filters: name, fieldname: JSON.stringify(['modified', 'modified_by']) },
    seen !== undefined && name !== undefined ? `remote-change:${doctype}:${name}:${seen}` : null,
    { revalidateOnFocus: false, revalidateIfStale: false, shouldRetryOnError: false },
  );
  if (seen === undefined) return undefined;
  const answer = who.data?.message;
  // Until get_value answers, the event's own time stands (the notice names "Someone").
  return { modified: answer?.modified ?? seen, user: answer?.modified_by };
}
