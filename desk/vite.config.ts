import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The desk's build: dist/index.html (served by the API at /login, /app and /app/…) and its hashed
 * bundles, served at /assets/desk/<file> with a year of caching (services/api/src/routes/desk.ts).
 * `npm run dev` proxies the API of a local `npm start` (the demo tenant).
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
  },
  server: {
    proxy: { '/api': { target: 'http://demo.localhost:8000', changeOrigin: true } },
  },
});
