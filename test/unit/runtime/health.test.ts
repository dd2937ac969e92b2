import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { HealthServer } from '../../../src/runtime/health.ts';

describe('HealthServer', () => {
  it('serves metrics, healthz, and a readyz that follows its checks', async () => {
    const registry = new Registry();
    new Counter({ name: 'example_total', help: 'x', registers: [registry] }).inc();
    let stalled: string | undefined = 'stalled: configmaps';
    const server = new HealthServer({
      port: 0,
      host: '127.0.0.1',
      registry,
      liveness: [{ name: 'ping', check: () => undefined }],
      readiness: [{ name: 'watches-live', check: () => stalled }],
    });
    const port = await server.start();
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: res.status, body: await res.text() };
    };
    try {
      assert.match((await get('/metrics')).body, /example_total 1/);
      assert.equal((await get('/healthz')).status, 200);
      const notReady = await get('/readyz');
      assert.equal(notReady.status, 500);
      assert.match(notReady.body, /\[-\]watches-live failed: stalled: configmaps/);
      stalled = undefined;
      const ready = await get('/readyz');
      assert.equal(ready.status, 200);
      assert.match(ready.body, /\[\+\]watches-live ok/);
      assert.equal((await get('/nope')).status, 404);
    } finally {
      await server.stop();
    }
  });
});
