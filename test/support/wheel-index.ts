// A Python package index on the host's loopback for sandbox tests: PEP 503 "simple" pages and one
// pure-Python wheel made here (so `pip install` has something of its own to fetch), served by a
// real HTTP server that records each request. The wheel is a zip written with jszip.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import JSZip from 'jszip';

export interface WheelIndex {
  port: number;
  /** Paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

const digest = (data: string | Buffer) =>
  `sha256=${createHash('sha256').update(data).digest('base64url')}`;

/** A wheel `name-version-py3-none-any.whl` whose module `name` holds `source`. */
export async function pureWheel(name: string, version: string, source: string): Promise<Buffer> {
  const info = `${name}-${version}.dist-info`;
  const files: Record<string, string> = {
    [`${name}/__init__.py`]: source,
    [`${info}/METADATA`]: `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`,
    [`${info}/WHEEL`]:
      'Wheel-Version: 1.0\nGenerator: keel-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
  };
  const record = [
    ...Object.entries(files).map(
      ([path, body]) => `${path},${digest(body)},${Buffer.byteLength(body)}`,
    ),
    `${info}/RECORD,,`,
  ].join('\n');
  const zip = new JSZip();
  for (const [path, body] of Object.entries(files)) zip.file(path, body);
  zip.file(`${info}/RECORD`, `${record}\n`);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/** Serves `wheel` as the only release of `name` at http://127.0.0.1:<port>/simple/<name>/. */
export async function serveWheelIndex(
  name: string,
  version: string,
  wheel: Buffer,
): Promise<WheelIndex> {
  const file = `${name}-${version}-py3-none-any.whl`;
  const sha = createHash('sha256').update(wheel).digest('hex');
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0]!;
    requests.push(path);
    const html = { 'content-type': 'text/html; charset=utf-8' };
    if (path === '/simple/' || path === '/simple')
      return void response
        .writeHead(200, html)
        .end(`<html><body><a href="/simple/${name}/">${name}</a></body></html>`);
    if (path === `/simple/${name}/` || path === `/simple/${name}`)
      return void response
        .writeHead(200, html)
        .end(`<html><body><a href="/files/${file}#sha256=${sha}">${file}</a></body></html>`);
    if (path === `/files/${file}`)
      return void response
        .writeHead(200, { 'content-type': 'application/octet-stream' })
        .end(wheel);
    response.writeHead(404).end('not here\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
