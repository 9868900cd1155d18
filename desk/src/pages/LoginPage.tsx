import { useFrappeAuth } from 'frappe-react-sdk';
import { useState, type SyntheticEvent } from 'react';
import { ErrorNotice } from '../shell/states';
import { ForgotPassword } from './PasswordPages';
import { useTitle } from '../shell/useTitle';
import { text } from '../text';

/** Where to go once signed in: Frappe's `redirect-to`, when it stays on this site's desk. */
function target(): string {
  const wanted = new URLSearchParams(window.location.search).get('redirect-to');
  return wanted && wanted.startsWith('/app') ? wanted : '/app';
}

/**
 * /login: `usr` and `pwd` go to /api/method/login through the SDK; Frappe's message is shown on
 * failure (wrong password, lockout). Success loads the desk afresh, as Frappe's login page does.
 */
export function LoginPage() {
  useTitle(text.login.title);
  const { login } = useFrappeAuth();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [forgot, setForgot] = useState(false);

  const onSubmit = async (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const value = (key: string) => {
        const v = form.get(key);
        return typeof v === 'string' ? v : '';
      };
      await login({ username: value('usr'), password: value('pwd') });
      window.location.assign(target());
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  if (forgot) {
    return (
      <main id="main" className="login">
        <ForgotPassword onDone={() => setForgot(false)} />
      </main>
    );
  }

  return (
    <main id="main" className="login">
      <form className="card login-card" onSubmit={(e) => void onSubmit(e)} aria-labelledby="login-heading">
        <h1 id="login-heading">{text.login.heading(window.location.hostname)}</h1>
        {error !== null && <ErrorNotice error={error} title={text.login.failed} />}
        <div className="field">
          <label htmlFor="login-usr">{text.login.user}</label>
          <input id="login-usr" name="usr" type="text" autoComplete="username" required autoFocus />
        </div>
        <div className="field">
          <label htmlFor="login-pwd">{text.login.password}</label>
          <input id="login-pwd" name="pwd" type="password" autoComplete="current-password" required />
        </div>
        <button className="button button-primary" type="submit" disabled={busy}>
          {busy ? text.login.submitting : text.login.submit}
        </button>
        <button className="button" type="button" onClick={() => setForgot(true)}>
          {text.login.forgot}
        </button>
      </form>
    </main>
  );
}
