// Store conformance for MCP servers and tool pins (0022), run on every store: a tenant's server
// configurations are put (insert, then replace), listed by name and deleted; another tenant sees
// none of them. A run's tool pin for a server is written once: a second pin with another hash
// leaves the first in force, and pins are per (run, server).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { withStore, type StoreFactory } from './conformance.ts';

export function mcpStoreConformance(factory: StoreFactory): void {
  describe(`MCP servers and tool pins: ${factory.name}`, () => {
    test('a tenant’s server configurations: put, replace, list, delete', () =>
      withStore(factory, async (store) => {
        const a = await store.ensureTenant('mcp-a', 'hash-mcp-a');
        const b = await store.ensureTenant('mcp-b', 'hash-mcp-b');
        await store.putMcpServer(a.id, 'fs', { name: 'fs', v: 1 });
        await store.putMcpServer(a.id, 'everything', { name: 'everything' });
        await store.putMcpServer(a.id, 'fs', { name: 'fs', v: 2 });
        const listed = await store.listMcpServers(a.id);
        assert.deepEqual(
          listed.map((s) => [s.name, s.config]),
          [
            ['everything', { name: 'everything' }],
            ['fs', { name: 'fs', v: 2 }],
          ],
        );
        assert.deepEqual(await store.listMcpServers(b.id), []);
        assert.equal(await store.deleteMcpServer(b.id, 'fs'), false);
        assert.equal(await store.deleteMcpServer(a.id, 'fs'), true);
        assert.deepEqual(
          (await store.listMcpServers(a.id)).map((s) => s.name),
          ['everything'],
        );
        await assert.rejects(store.putMcpServer('ten_missing', 'x', {}), {
          code: 'tenant_not_found',
        });
      }));

    test('a run’s tool pin is written once per server', () =>
      withStore(factory, async (store) => {
        assert.equal(await store.getMcpToolPin('run_1', 'fs'), null);
        const first = await store.pinMcpTools('run_1', 'fs', {
          hash: 'h1',
          tools: [{ name: 'a' }],
        });
        assert.equal(first.hash, 'h1');
        const second = await store.pinMcpTools('run_1', 'fs', { hash: 'h2', tools: [] });
        assert.deepEqual([second.hash, second.tools], ['h1', [{ name: 'a' }]]);
        const other = await store.pinMcpTools('run_1', 'everything', { hash: 'h3', tools: [] });
        assert.equal(other.hash, 'h3');
        assert.equal(await store.getMcpToolPin('run_2', 'fs'), null);
        assert.equal((await store.getMcpToolPin('run_1', 'fs'))?.hash, 'h1');
      }));
  });
}
