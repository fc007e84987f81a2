// Pages for the browser pool tests, served by a real node:http server on 127.0.0.1: a login that
// sets a cookie and a local-storage entry, a page that echoes the cookie the browser sent, and a
// form whose button changes the page's DOM (state that only a live page keeps).
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BrowserPages {
  url: string;
  close(): Promise<void>;
}

const html = (title: string, body: string): string =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;

export async function serveBrowserPages(): Promise<BrowserPages> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (url.pathname === '/login') {
      const name = (url.searchParams.get('name') ?? 'nobody').replace(/[^a-z0-9-]/gi, '');
      res.setHeader('set-cookie', `who=${name}; Path=/; Max-Age=3600; SameSite=Lax`);
      res.end(
        html(
          'Logged in',
          `<h1 id="hello">Logged in as ${name}</h1>
<script>localStorage.setItem('who', ${JSON.stringify(name)});</script>
<input id="q"><button id="go" onclick="document.getElementById('out').textContent = 'typed: ' + document.getElementById('q').value">Go</button>
<p id="out">nothing typed</p>`,
        ),
      );
      return;
    }
    if (url.pathname === '/whoami') {
      res.end(
        html(
          'Who am I',
          `<p id="cookie">cookie: ${(req.headers.cookie ?? 'none').replace(/[<>&]/g, '')}</p>
<p id="storage"></p><script>document.getElementById('storage').textContent = 'storage: ' + (localStorage.getItem('who') ?? 'none');</script>`,
        ),
      );
      return;
    }
    res.statusCode = 404;
    res.end(html('Not found', '<p>not found</p>'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Why the browser pool tests cannot run here (no Chromium), or undefined when they can. */
export function chromiumMissing(
  path = process.env.KEEL_BROWSER_PATH ?? '/usr/bin/chromium',
): string | undefined {
  if (existsSync(path)) return undefined;
  const reason = `Chromium not found at ${path} (apt-get install -y chromium): browser pool tests skipped`;
  if (process.env.CI === 'true')
    throw new Error(`under CI the browser pool tests must run: ${reason}`);
  return reason;
}
