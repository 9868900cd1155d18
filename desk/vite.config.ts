import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/** Redoc's side menu attribution mounts Redocly's logo from its CDN (no option hides it); /api/docs loads nothing from elsewhere. */
const REDOC_LOGO = /[\w$]+\.createElement\("img",\{alt:"redocly logo",[^{}]*"https:\/\/cdn\.redoc\.ly\/[^"]*"\}\)/g;

/**
 * Emits Redoc's standalone bundle (docs.ts imports it `?url`) without that logo: the attribution
 * keeps its text and link. Patched as it is emitted, so its hashed name is the patched content's. A
 * Redoc whose bundle still names its CDN fails the build. `npm run dev` serves it unpatched (no policy there).
 */
function redocWithoutRemoteLogo(): Plugin {
  return {
    name: 'quire:redoc-without-remote-logo',
    apply: 'build',
    enforce: 'pre',
    async load(id) {
      const [file, query] = id.split('?');
      if (query !== 'url' || !file?.endsWith('/redoc/bundles/redoc.standalone.js')) return null;
      const source = (await fs.readFile(file, 'utf8')).replace(REDOC_LOGO, 'null');
      if (source.includes('cdn.redoc.ly')) this.error(`${file} still loads something from cdn.redoc.ly: update REDOC_LOGO in vite.config.ts`);
      const ref = this.emitFile({ type: 'asset', name: 'redoc.standalone.js', source });
      return `export default import.meta.ROLLUP_FILE_URL_${ref};`;
    },
  };
}

/**
 * The desk's build: dist/index.html (served by the API at /login, /app and /app/…), dist/docs.html
 * (the API reference at /api/docs, Redoc over /api/openapi.json) and their hashed bundles, served at /assets/desk/<file> with a year of caching (services/api/src/routes/desk.ts).
 * `npm run dev` serves the sources with hot reload, proxying /api to a local `npm start` (its demo
 * tenant); sign in at http://localhost:5173/login.
 */
export default defineConfig({
  plugins: [react(), redocWithoutRemoteLogo()],
  base: '/assets/desk/',
  build: {
    outDir: 'dist',
    assetsDir: '',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      input: {
        desk: fileURLToPath(new URL('index.html', import.meta.url)),
        docs: fileURLToPath(new URL('docs.html', import.meta.url)),
      },
    },
  },
  server: {
    // The SDK names the site after the page's host (localhost here): the demo tenant is meant.
    proxy: { '/api': { target: 'http://127.0.0.1:8000', changeOrigin: true, headers: { 'X-Frappe-Site-Name': 'demo' } } },
  },
});
