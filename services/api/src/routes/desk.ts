import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DoesNotExistError } from '@quire/errors';
import { GUEST } from '@quire/permissions';
import { contentSecurityPolicy, pageSecurityHeaders } from '@quire/http';
import express, { type Request, type Response, type Router } from 'express';

/**
 * The desk (the `desk/` workspace, built by Vite into desk/dist) on every tenant's host, as
 * Frappe serves its own: `/` sends a Guest to `/login` and a signed-in user to `/app`; `/login`,
 * `/update-password` (a reset email's link), `/app` and everything under it answer the same HTML page (the desk routes on the client, so a
 * deep link works on reload), never cached; the hashed bundles under `/assets/desk/` are cached
 * for a year; `/favicon.ico` is the desk's icon. Mounted after the API's routes, so `/api/…` and the
 * legacy `/?cmd=` win.
 */

/**
 * desk/dist beside this file's workspace: the same depth from src/routes/ and dist/routes/. Resolved
 * from the file path, not `new URL(…, import.meta.url)`: under a DOM environment (the React SDK's
 * jsdom tests) the global URL is the DOM's, which node:url's fileURLToPath refuses.
 */
export const DESK_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../desk/dist');

const ASSETS_PATH = '/assets/desk';
/** The icon desk/index.html links, as Vite emits it (hashed). */
const ICON = /^favicon-[\w-]+\.svg$/;

/**
 * The desk's policy: its scripts, styles and connections (the API, realtime) from its own origin
 * only, no inline script; images may also be attached remote files (https) and previews (blob:).
 */
const DESK_CSP = contentSecurityPolicy([
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob: https:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "form-action 'self'",
]);
/** The API reference page's policy: scripts, data and images from this origin (Redoc styles inline, searches in a blob worker). */
const DOCS_CSP = contentSecurityPolicy([
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "form-action 'self'",
]);
const PAGE_PATHS = ['/login', '/update-password', '/app', '/app/*rest'];

export function deskRouter(distDir: string = DESK_DIST): Router {
  const router = express.Router();
  const assets = express.static(distDir, {
    index: false,
    redirect: false,
    dotfiles: 'ignore',
    fallthrough: true,
    // Every file Vite emits into dist/ has its content hash in its name.
    immutable: true,
    maxAge: '1y',
  });
  router.use(ASSETS_PATH, (req, res, next) => {
    // The page itself is only ever served uncached, at the desk's routes.
    if (path.extname(req.path) === '.html') {
      next(new DoesNotExistError('', { silent: true }));
      return;
    }
    assets(req, res, next);
  });
  router.use(ASSETS_PATH, () => {
    throw new DoesNotExistError('', { silent: true });
  });

  // The API reference (Redoc over /api/openapi.json): open to anyone; the description shows what the caller may use.
  router.get('/api/docs', (req, res, next) => {
    // Everything from this origin: the desk's build drops the logo Redoc would load from its CDN (desk/vite.config.ts).
    sendPage(distDir, req, res, 'docs.html', DOCS_CSP).catch(next);
  });

  // Asked for by browsers on any page that links no icon (the API's own answers among them).
  router.get('/favicon.ico', (_req, res, next) => {
    sendIcon(distDir, res).catch(next);
  });

  router.get('/', (_req, res) => {
    res.redirect(302, isGuest(res) ? '/login' : '/app');
  });
  router.get(PAGE_PATHS, (req, res, next) => {
    if (req.path === '/login' && !isGuest(res)) {
      res.redirect(302, '/app');
      return;
    }
    // The reset email's link: for anyone, signed in or not (the key is what it checks).
    if (req.path !== '/login' && req.path !== '/update-password' && isGuest(res)) {
      res.redirect(302, `/login?redirect-to=${encodeURIComponent(req.originalUrl)}`);
      return;
    }
    sendPage(distDir, req, res, 'index.html', DESK_CSP, res.locals.tenant.name).catch(next);
  });
  return router;
}

function isGuest(res: Response): boolean {
  return res.locals.principal.user === GUEST;
}

/** Tenant names are host-like; escaped all the same, as anything written into HTML. */
const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * `site`: the tenant's name, written into the page as Frappe's desk page carries its boot's
 * `sitename`: the desk's realtime socket names it as its namespace (`/<site>`), which the host
 * alone does not tell (a custom domain, the default tenant).
 */
async function sendPage(distDir: string, req: Request, res: Response, page: 'index.html' | 'docs.html', policy: string, site?: string): Promise<void> {
  let html: Buffer;
  try {
    // Read per request (a few KiB): a rebuilt desk is served without a restart.
    html = await fs.readFile(path.join(distDir, page));
  } catch {
    throw new DoesNotExistError('The desk is not built: run `npm run build --workspace desk`', { title: 'Not Found' });
  }
  if (site !== undefined)
    html = Buffer.from(html.toString('utf8').replace('</head>', `<meta name="frappe-site-name" content="${escapeAttribute(site)}" />\n  </head>`));
  res.set({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache', ...pageSecurityHeaders(policy, req.secure) });
  res.status(200).end(html);
}

/**
 * The SVG itself rather than a redirect to its hashed asset: a cached redirect would outlive the
 * next build's name. Cached for a day, so a new icon shows within one.
 */
async function sendIcon(distDir: string, res: Response): Promise<void> {
  const icon = (await fs.readdir(distDir).catch(() => [])).find((f) => ICON.test(f));
  if (!icon) throw new DoesNotExistError('', { silent: true });
  res.set({ 'Content-Type': 'image/svg+xml', 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' });
  res.status(200).end(await fs.readFile(path.join(distDir, icon)));
}
