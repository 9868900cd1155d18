/**
 * The headers every HTML page Quire serves carries (the desk, the API reference, the sign-in,
 * consent and sign-out pages), as helmet sets them: a Content-Security-Policy that also forbids
 * framing (RFC 9700 §4.16: a consent page must not be framed), X-Frame-Options for browsers that
 * predate `frame-ancestors`, no MIME sniffing, no referrer beyond the site, and HSTS over HTTPS.
 * JSON answers carry only `nosniff` (they are never rendered).
 */

/** Directives every page's policy ends with: no plugins, no `<base>` rewriting, never in a frame. */
const CLOSING = ["object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"] as const;

/** A Content-Security-Policy of the page's own directives and the closing ones. */
export function contentSecurityPolicy(directives: readonly string[]): string {
  return [...directives, ...CLOSING].join('; ');
}

/** 180 days; subdomains included, as every tenant host of a deployment is served the same way. */
const HSTS = 'max-age=15552000; includeSubDomains';

/** The headers of an HTML page with this policy; HSTS only on a request that came over HTTPS. */
export function pageSecurityHeaders(policy: string, secure: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Security-Policy': policy,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'Cross-Origin-Opener-Policy': 'same-origin',
  };
  if (secure) headers['Strict-Transport-Security'] = HSTS;
  return headers;
}
