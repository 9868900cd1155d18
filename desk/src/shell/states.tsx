import { text } from '../text';
import { messagesOf } from '../form/errors';

/** The loading state of a page or a part of it: announced politely. */
export function Loading({ label = text.loading }: { label?: string }) {
  return (
    <p className="state state-loading" role="status">
      {label}
    </p>
  );
}

/** An error from the API (a FrappeError), in Frappe's words. */
export function ErrorNotice({ error, title = text.errorTitle }: { error: unknown; title?: string }) {
  return (
    <div className="notice notice-error" role="alert">
      <p className="notice-title">{title}</p>
      <ul>
        {messagesOf(error).map((m, i) => (
          <li key={i}>{m}</li>
        ))}
      </ul>
    </div>
  );
}
