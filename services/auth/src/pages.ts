import { createHash } from 'node:crypto';
import { contentSecurityPolicy, pageSecurityHeaders } from '@quire/http';

/**
 * The auth service's pages: server-rendered, accessible HTML that works without JavaScript.
 * Every form carries a CSRF token (double-submit: the same random value in a cookie and a field).
 */

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

const STYLE = `
  body { font-family: system-ui, sans-serif; background: #f4f5f6; color: #1f272e; margin: 0; }
  main { max-width: 26rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: .5rem; box-shadow: 0 1px 3px #0002; }
  h1 { font-size: 1.4rem; margin-top: 0; }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input[type=text], input[type=email], input[type=password] { width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid #8d99a6; border-radius: .25rem; }
  input:focus, button:focus { outline: 3px solid #2490ef; outline-offset: 2px; }
  button { margin-top: 1.5rem; padding: .6rem 1.2rem; font-size: 1rem; border-radius: .25rem; border: 1px solid #1f272e; cursor: pointer; }
  button.primary { background: #1f272e; color: #fff; }
  .actions { display: flex; gap: .75rem; }
  .error { color: #a61b1b; background: #fdecec; padding: .6rem; border-radius: .25rem; }
  ul.scopes { padding-left: 1.2rem; }
  .muted { color: #5e6d7a; font-size: .9rem; }
`;

/**
 * The pages' policy: nothing runs, nothing loads but the one style block (by its hash), and no
 * site may frame them. No `form-action`: browsers apply it to the redirect after a form is posted,
 * and consent ends in a redirect to the client's redirect_uri.
 */
const PAGE_CSP = contentSecurityPolicy([
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE, 'utf8').digest('base64')}'`,
  "img-src 'self'",
]);

/** The security headers of every page here (pageSecurityHeaders with PAGE_CSP). */
export function authPageHeaders(secure: boolean): Record<string, string> {
  return pageSecurityHeaders(PAGE_CSP, secure);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

export interface LoginPage {
  action: string;
  csrf: string;
  appName: string;
  site: string;
  usr?: string;
  error?: string;
}

export function loginPage(p: LoginPage): string {
  const error = p.error ? `<p class="error" role="alert" id="login-error">${escapeHtml(p.error)}</p>` : '';
  return layout(
    `Sign in to ${p.site}`,
    `<h1>Sign in to ${escapeHtml(p.site)}</h1>
<p><strong>${escapeHtml(p.appName)}</strong> wants to use your account.</p>
${error}
<form method="post" action="${escapeHtml(p.action)}"${p.error ? ' aria-describedby="login-error"' : ''}>
  <input type="hidden" name="csrf_token" value="${escapeHtml(p.csrf)}">
  <label for="usr">Email</label>
  <input type="text" id="usr" name="usr" autocomplete="username" required autofocus value="${escapeHtml(p.usr ?? '')}">
  <label for="pwd">Password</label>
  <input type="password" id="pwd" name="pwd" autocomplete="current-password" required>
  <button type="submit" class="primary">Sign in</button>
</form>`,
  );
}

export interface ConsentPage {
  action: string;
  csrf: string;
  appName: string;
  user: string;
  scopes: Array<{ scope: string; description: string }>;
}

export function consentPage(p: ConsentPage): string {
  const items = p.scopes.map((s) => `<li>${escapeHtml(s.description)} <span class="muted">(${escapeHtml(s.scope)})</span></li>`).join('\n    ');
  return layout(
    `Allow ${p.appName}?`,
    `<h1>Allow ${escapeHtml(p.appName)} to use your account?</h1>
<p>Signed in as <strong>${escapeHtml(p.user)}</strong>. ${escapeHtml(p.appName)} asks to:</p>
<ul class="scopes">
    ${items}
</ul>
<p class="muted">It never gets more than your own roles allow.</p>
<form method="post" action="${escapeHtml(p.action)}">
  <input type="hidden" name="csrf_token" value="${escapeHtml(p.csrf)}">
  <div class="actions">
    <button type="submit" name="decision" value="allow" class="primary">Allow</button>
    <button type="submit" name="decision" value="deny">Deny</button>
  </div>
</form>`,
  );
}

export function errorPage(error: string, description: string): string {
  return layout(
    'Sign-in problem',
    `<h1>Something went wrong</h1>
<p class="error" role="alert"><strong>${escapeHtml(error)}</strong>${description ? `: ${escapeHtml(description)}` : ''}</p>`,
  );
}

/** RP-initiated logout's confirmation; `form` is oidc-provider's hidden form (id op.logoutForm). */
export function logoutPage(site: string, form: string): string {
  return layout(
    `Sign out of ${site}?`,
    `<h1>Sign out of ${escapeHtml(site)}?</h1>
${form}
<div class="actions">
  <button type="submit" form="op.logoutForm" name="logout" value="yes" class="primary" autofocus>Sign out</button>
  <button type="submit" form="op.logoutForm">Stay signed in</button>
</div>`,
  );
}

export function signedOutPage(site: string): string {
  return layout('Signed out', `<h1>Signed out</h1>\n<p>You are signed out of ${escapeHtml(site)}.</p>`);
}
