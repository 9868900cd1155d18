import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { createUser, launchBrowser, originOf, PASSWORD } from '../oauth/support';
import { ROOT } from '../support/process';
import { startTestServer, type ServerOptions, type TestServer, type TestTenant } from '../support/server';

/**
 * The desk suites' shared parts: the desk built (once, when its sources are newer than its
 * dist/), one API server and one Chromium per file, a tenant with a signed-in System Manager per
 * test, axe-core and screenshots.
 */

export { PASSWORD };
const DESK = path.join(ROOT, 'desk');
const DIST = path.join(DESK, 'dist');
export const SCREENSHOTS = path.join(ROOT, 'test-results', 'desk');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Builds desk/dist when it is missing or older than its sources and build config (a lock keeps parallel files from building twice). */
export function ensureDeskBuilt(): void {
  const lock = path.join(DESK, '.build-lock');
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // another test file is building: wait for it
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    const index = path.join(DIST, 'index.html');
    const topLevel = ['index.html', 'docs.html', 'vite.config.ts'].map((f) => fs.statSync(path.join(DESK, f)).mtimeMs);
    const sources = Math.max(newestMtime(path.join(DESK, 'src')), ...topLevel);
    if (!fs.existsSync(index) || fs.statSync(index).mtimeMs < sources) {
      // As `npm install` builds it: under vitest's NODE_ENV=test, React and React Aria build other code.
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], {
        cwd: DESK,
        stdio: 'pipe',
        env: { ...process.env, NODE_ENV: 'production' },
      });
    }
  } finally {
    fs.rmdirSync(lock);
  }
}

export interface DeskFixture {
  server: TestServer;
  browser: Browser;
}

export async function startDesk(options: ServerOptions = {}): Promise<DeskFixture> {
  ensureDeskBuilt();
  const [server, browser] = await Promise.all([startTestServer(options), launchBrowser()]);
  return { server, browser };
}

export async function stopDesk(f: DeskFixture | undefined): Promise<void> {
  await f?.browser.close();
  await f?.server.close();
}

export interface DeskUser {
  tenant: TestTenant;
  origin: string;
  email: string;
  page: Page;
}

/** A fresh tenant, a System Manager in it, and a page (its own cookies) signed in through /login. */
export async function signedIn(f: DeskFixture, options: { viewport?: { width: number; height: number } } = {}): Promise<DeskUser> {
  const tenant = await f.server.tenant('desk');
  const email = 'ada@example.com';
  await createUser(tenant, email);
  const context = await f.browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 } });
  const page = await context.newPage();
  await watchContentSecurity(page);
  const origin = originOf(f.server, tenant);
  await signIn(page, origin, email, PASSWORD);
  return { tenant, origin, email, page };
}

export async function signIn(page: Page, origin: string, usr: string, pwd: string): Promise<void> {
  await page.goto(`${origin}/login`);
  await page.getByLabel('Email or user name').fill(usr);
  await page.getByLabel('Password', { exact: true }).fill(pwd);
  await Promise.all([page.waitForURL(`${origin}/app`), page.getByRole('button', { name: 'Sign in' }).click()]);
}

/** The input of a form field, found as the issue names it: by `data-fieldname`. */
export function field(page: Page, fieldname: string) {
  return page.locator(`[data-fieldname="${fieldname}"]`).first();
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** axe-core run in the page; the serious and critical violations, described. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: an inline <script> would be refused by the desk's policy.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: () => Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return (violations as AxeViolation[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${String(v.impact)}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
}

const refusedByPolicy = new WeakMap<Page, string[]>();
const REFUSAL = 'content-security-policy refused:';

/** Records what the page's Content-Security-Policy refuses (the document's securitypolicyviolation events). */
export async function watchContentSecurity(page: Page): Promise<void> {
  const refused: string[] = [];
  refusedByPolicy.set(page, refused);
  page.on('console', (message) => {
    if (message.text().startsWith(REFUSAL)) refused.push(message.text().slice(REFUSAL.length).trim());
  });
  await page.addInitScript((prefix) => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const what = e.sample || e.blockedURI || (e.target instanceof Element ? e.target.outerHTML.slice(0, 120) : '');
      console.log(`${prefix} ${e.violatedDirective} ${e.sourceFile}:${e.lineNumber} ${what}`);
    });
  }, REFUSAL);
}

/** What the page's policy refused so far (a page watched with watchContentSecurity). */
export function contentSecurityRefusals(page: Page): string[] {
  return refusedByPolicy.get(page) ?? [];
}

/**
 * The page at desktop width and at 360 px, saved under test-results/desk/ (git-ignored); by then
 * the desk's own policy has refused nothing it needs.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  expect(contentSecurityRefusals(page), `${name}: refused by the page's Content-Security-Policy`).toEqual([]);
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const original = page.viewportSize() ?? { width: 1280, height: 800 };
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize({ width: 360, height: 740 });
  // Usable at 360 px: nothing wider than the screen but scrollable tables.
  const { overflow, culprits } = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    // The outermost elements reaching past the screen's edge, to name in the failure.
    const past = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > width + 1);
    const outermost = past.filter((e) => !past.some((o) => o !== e && o.contains(e) && o.getBoundingClientRect().right > width + 1 && o !== document.body));
    return {
      overflow: document.documentElement.scrollWidth - width,
      culprits: outermost.slice(0, 5).map((e) => {
        const chain: string[] = [];
        for (let n: Element | null = e; n && n !== document.body; n = n.parentElement)
          chain.push(`${n.tagName.toLowerCase()}.${[...n.classList].join('.')}:${Math.round(n.getBoundingClientRect().width)}`);
        return chain.join(' < ');
      }),
    };
  });
  expect(overflow, `${name} scrolls sideways at 360 px: ${culprits.join(', ')}`).toBeLessThanOrEqual(0);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-360.png`), fullPage: true });
  await page.setViewportSize(original);
}
