// Builds the dashboard (web/) into dist/web, which Keel serves at `/`
// (src/api/routes/dashboard.ts). `npx vite --config web/vite.config.ts` serves it with hot reload
// against a `keel dev` on :7070.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  plugins: [react()],
  build: {
    outDir: `${here}/../dist/web`,
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
  server: { proxy: { '/v1': 'http://127.0.0.1:7070' } },
  logLevel: 'warn',
});
