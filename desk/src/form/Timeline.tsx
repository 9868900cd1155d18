import { useFrappeAuth, useFrappePostCall } from 'frappe-react-sdk';
import { useId, useState, type SyntheticEvent } from 'react';
import type { DocTypeMeta } from '../meta/types';
import { ErrorNotice, Loading } from '../shell/states';
import { text } from '../text';
import { Attachments } from './Attachments';
import { useDocinfo, type CommentEntry, type Docinfo } from './docinfo';
import { RelativeTime } from './RelativeTime';
import { RichText } from './richText';
import { versionLines } from './versionLines';
import './timeline.css';

interface Props {
  meta: DocTypeMeta;
  childMeta: (name: string) => DocTypeMeta | undefined;
  name: string;
}

type Entry =
  | { kind: 'version'; key: string; creation: string; lines: string[] }
  | { kind: 'comment'; key: string; creation: string; author: string; comment: CommentEntry }
  | { kind: 'log'; key: string; creation: string; comment: CommentEntry };

/** Versions, comments and the platform's notes in one list, newest first (a Version without a readable change is left out). */
function entriesOf(docinfo: Docinfo, meta: DocTypeMeta, childMeta: Props['childMeta']): Entry[] {
  const who = (user: string) => docinfo.fullNames[user] ?? user;
  const versions = docinfo.versions.map((v): Entry => ({
    kind: 'version',
    key: `v:${v.name}`,
    creation: v.creation,
    lines: versionLines(who(v.owner), v.data, meta, childMeta),
  }));
  const comments = docinfo.comments.map((c): Entry => ({
    kind: 'comment',
    key: `c:${c.name}`,
    creation: c.creation,
    author: docinfo.fullNames[c.comment_email || c.owner] ?? (c.comment_by || c.comment_email || c.owner),
    comment: c,
  }));
  const logs = docinfo.logs.map((c): Entry => ({ kind: 'log', key: `l:${c.name}`, creation: c.creation, comment: c }));
  const entries = [...versions, ...comments, ...logs].filter((e) => e.kind !== 'version' || e.lines.length > 0);
  return entries.sort((a, b) => (a.creation < b.creation ? 1 : a.creation > b.creation ? -1 : 0));
}

/**
 * The form's timeline (Frappe's): the document's attachments, a box to comment, and what happened
 * to it newest first: Versions (track_changes) as "who changed what from what to what", comments
 * with their author. Drawn from get_docinfo; each action asks for it again.
 */
export function Timeline({ meta, childMeta, name }: Props) {
  const { docinfo, error, refresh } = useDocinfo(meta.name, name);
  const headingId = useId();
  return (
    <section className="card timeline" aria-labelledby={headingId}>
      <h2 id={headingId}>{text.timeline.title}</h2>
      <Attachments doctype={meta.name} name={name} attachments={docinfo?.attachments} canAttach={meta.__perm.rights.write} onChange={() => void refresh()} />
      <CommentBox doctype={meta.name} name={name} fullNames={docinfo?.fullNames ?? {}} onAdded={() => void refresh()} />
      {error !== undefined && <ErrorNotice error={error} title={text.timeline.loadFailed} />}
      {!docinfo && error === undefined && <Loading />}
      {docinfo && <Feed entries={entriesOf(docinfo, meta, childMeta)} />}
    </section>
  );
}

function Feed({ entries }: { entries: Entry[] }) {
  if (entries.length === 0) return <p className="state">{text.timeline.empty}</p>;
  return (
    <ol className="timeline-feed">
      {entries.map((entry) => (
        <li key={entry.key} className={`timeline-item timeline-entry-${entry.kind}`} data-kind={entry.kind}>
          {entry.kind === 'version' ? (
            <>
              <ul className="timeline-changes">
                {entry.lines.map((line, i) => (
                  <li key={i}>{line}</li>
                ))}
              </ul>
              <RelativeTime value={entry.creation} />
            </>
          ) : entry.kind === 'log' ? (
            <>
              <span className="timeline-log">
                <RichText html={entry.comment.content ?? ''} />
              </span>
              <RelativeTime value={entry.creation} />
            </>
          ) : (
            <>
              <p className="timeline-by">
                {text.timeline.commented(entry.author)} <RelativeTime value={entry.creation} />
              </p>
              <div className="timeline-comment">
                <RichText html={entry.comment.content ?? ''} />
              </div>
            </>
          )}
        </li>
      ))}
    </ol>
  );
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The comment's plain text as the HTML Frappe keeps (its editor's paragraphs), nothing of it markup. */
function asCommentHtml(plain: string): string {
  return plain
    .trim()
    .split(/\n{2,}/)
    .map((para) => `<p>${escapeHtml(para).replace(/\n/g, '<br>')}</p>`)
    .join('');
}

/** frappe.desk.form.utils.add_comment(reference_doctype, reference_name, content, comment_email, comment_by). */
function CommentBox({ doctype, name, fullNames, onAdded }: { doctype: string; name: string; fullNames: Record<string, string>; onAdded: () => void }) {
  const { currentUser } = useFrappeAuth();
  const { call, loading } = useFrappePostCall('frappe.desk.form.utils.add_comment');
  const [content, setContent] = useState('');
  const [error, setError] = useState<unknown>(null);
  const id = useId();
  const submit = async (e: SyntheticEvent) => {
    e.preventDefault();
    if (content.trim() === '') {
      setError({ message: text.timeline.commentEmpty });
      return;
    }
    setError(null);
    try {
      const user = currentUser ?? '';
      await call({
        reference_doctype: doctype,
        reference_name: name,
        content: asCommentHtml(content),
        comment_email: user,
        comment_by: fullNames[user] ?? user,
      });
      setContent('');
      onAdded();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form className="comment-box" onSubmit={(e) => void submit(e)} noValidate>
      <label htmlFor={id}>{text.timeline.comment}</label>
      <textarea id={id} rows={3} value={content} placeholder={text.timeline.commentPlaceholder} onChange={(e) => setContent(e.target.value)} />
      {error !== null && <ErrorNotice error={error} title={text.timeline.commentFailed} />}
      <div className="actions">
        <button type="submit" className="button" disabled={loading}>
          {loading ? text.timeline.commenting : text.timeline.addComment}
        </button>
      </div>
    </form>
  );
}
