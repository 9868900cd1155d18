import { useFrappePostCall } from 'frappe-react-sdk';
import { useState, type SyntheticEvent } from 'react';
import { ErrorNotice } from '../shell/states';
import { useTitle } from '../shell/useTitle';
import { text } from '../text';

const RESET = 'frappe.core.doctype.user.user.reset_password';
const UPDATE = 'frappe.core.doctype.user.user.update_password';

function valueOf(form: FormData, key: string): string {
  const v = form.get(key);
  return typeof v === 'string' ? v : '';
}

/**
 * "Forgot your password?" on the sign-in page: the server emails a one-time link to this site's own
 * address (never one a request named). Unknown users are answered as Frappe answers them.
 */
export function ForgotPassword({ onDone }: { onDone: () => void }) {
  const { call, loading } = useFrappePostCall(RESET);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const onSubmit = async (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    const user = valueOf(new FormData(event.currentTarget), 'user').trim();
    setError(null);
    try {
      await call({ user });
      setSentTo(user);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <form className="card login-card" onSubmit={(e) => void onSubmit(e)} aria-labelledby="forgot-heading">
      <h1 id="forgot-heading">{text.password.forgotHeading}</h1>
      {sentTo === null ? <p className="hint">{text.password.forgotIntro}</p> : null}
      {sentTo !== null && (
        <p className="notice notice-ok" role="status">
          {text.password.sent(sentTo)}
        </p>
      )}
      {error !== null && <ErrorNotice error={error} title={text.password.sendFailed} />}
      <div className="field">
        <label htmlFor="forgot-user">{text.password.email}</label>
        <input id="forgot-user" name="user" type="email" autoComplete="username" required autoFocus />
      </div>
      <button className="button button-primary" type="submit" disabled={loading}>
        {loading ? text.password.sending : text.password.send}
      </button>
      <button className="button" type="button" onClick={onDone}>
        {text.password.backToLogin}
      </button>
    </form>
  );
}

/** The reset key of the link, read once; the address bar then drops it (history, screenshots). */
function takeKey(): string {
  const key = new URLSearchParams(window.location.search).get('key') ?? '';
  if (key) window.history.replaceState(null, '', window.location.pathname);
  return key;
}

/** /update-password?key=…: the page the reset email links to (Frappe's update-password page). */
export function UpdatePasswordPage() {
  useTitle(text.password.updateTitle);
  const [key] = useState(takeKey);
  const { call, loading } = useFrappePostCall(UPDATE);
  const [error, setError] = useState<unknown>(null);
  const [mismatch, setMismatch] = useState(false);
  const [done, setDone] = useState(false);

  const onSubmit = async (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const password = valueOf(form, 'new_password');
    setMismatch(password !== valueOf(form, 'confirm'));
    if (password !== valueOf(form, 'confirm')) return;
    setError(null);
    try {
      await call({ key, new_password: password });
      setDone(true);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <main id="main" className="login">
      <form className="card login-card" onSubmit={(e) => void onSubmit(e)} aria-labelledby="update-heading">
        <h1 id="update-heading">{text.password.updateHeading}</h1>
        {!key && !done && (
          <p className="notice notice-error" role="alert">
            {text.password.noKey}
          </p>
        )}
        {done ? (
          <>
            <p className="notice notice-ok" role="status">
              {text.password.updated}
            </p>
            <a className="button button-primary" href="/login">
              {text.password.backToLogin}
            </a>
          </>
        ) : (
          <>
            {error !== null && <ErrorNotice error={error} title={text.password.updateFailed} />}
            {mismatch && (
              <p className="notice notice-error" role="alert">
                {text.password.mismatch}
              </p>
            )}
            <div className="field">
              <label htmlFor="update-new">{text.password.newPassword}</label>
              <input id="update-new" name="new_password" type="password" autoComplete="new-password" required autoFocus disabled={!key} />
            </div>
            <div className="field">
              <label htmlFor="update-confirm">{text.password.confirm}</label>
              <input id="update-confirm" name="confirm" type="password" autoComplete="new-password" required disabled={!key} />
            </div>
            <button className="button button-primary" type="submit" disabled={loading || !key}>
              {loading ? text.password.updating : text.password.update}
            </button>
          </>
        )}
      </form>
    </main>
  );
}
