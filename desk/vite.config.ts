import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The desk's build: dist/index.html (served by the API at /login, /app and /app/…), dist/docs.html
 * (the API reference at /api/docs, Redoc over /api/openapi.json) and their hashed bundles, served at /assets/desk/<file> with a year of caching (services/api/src/routes/desk.ts).
 * `npm run dev` serves the sources with hot reload, proxying /api to a local `npm start` (its demo
 * tenant); sign in at http://localhost:5173/login.
 */
export default defineConfig({
  plugins: [react()],
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
