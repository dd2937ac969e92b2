/**
 * Runtime benchmarks against a real kube-apiserver (src/envtest), in one run:
 *  - event→reconcile latency p50/p99 with 500 cached objects (time from the test's write to reconcile start),
 *  - memory per cached object at 5,000 objects, ours vs client-node's makeInformer (each in its own process), and
 *    per object added from 1,000 to 5,000 (the growth, without the cache's fixed part),
 *  - reconciles/s (no-op reconciler over 5,000 keys; SSA-writing reconciler over 500 keys).
 * Prints a table and writes bench/results/runtime-<timestamp>.json.
 */

import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
import { ControlPlane } from '../src/envtest/index.ts';
import {
  Controller,
  InformerCache,
  KubeHttp,
  type KubeObject,
  Manager,
  silentLogger,
  Watcher,
} from '../src/runtime/index.ts';
import { CONFIG_MAPS, NAMESPACES } from '../src/runtime/kinds.ts';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const configMaps = CONFIG_MAPS;
const self = fileURLToPath(import.meta.url);
/** The memory figures' object counts: the whole cache at the larger, the growth per object between the two. */
const MEMORY_OBJECTS = 5000;
const SMALL_OBJECTS = 1000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function createMany(http: KubeHttp, namespace: string, count: number, prefix: string): Promise<void> {
  let next = 0;
  const payload = 'x'.repeat(256);
  const writer = async () => {
    while (next < count) {
      const i = next++;
      // Server-side apply, so objects carry managedFields like objects written by controllers do.
      await http.apply(
        configMaps,
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `${prefix}${i}`, namespace, labels: { app: 'bench', index: String(i) } },
          data: { payload, index: String(i) },
        } as ConfigMap,
        { fieldManager: 'bench', force: true },
      );
    }
  };
  await Promise.all(Array.from({ length: 32 }, writer));
}

async function measureMemory(
  mode: string,
  kubeconfig: string,
  namespace: string,
  expected: number,
): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const heap = () => {
    globalThis.gc?.();
    globalThis.gc?.();
    return process.memoryUsage().heapUsed;
  };
  let stop: () => Promise<unknown>;
  let size: () => number;
  // Load the libraries' code before the baseline, so only cached objects are counted.
  const http = new KubeHttp(kc);
  const core = kc.makeApiClient(CoreV1Api);
  await core.listNamespacedConfigMap({ namespace, limit: 1 });
  await http.list(configMaps, { namespace, limit: 1 });
  const baseline = heap();
  if (mode === 'ours') {
    const watcher = new Watcher<KubeObject>({ http, resource: configMaps, namespace, logger: silentLogger });
    watcher.start();
    await watcher.waitForSync();
    stop = () => watcher.stop();
    size = () => watcher.store.size;
  } else {
    const informer = makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace }),
    );
    await informer.start();
    stop = () => informer.stop();
    size = () => informer.list(namespace).length;
  }
  await new Promise((r) => setTimeout(r, 1000));
  const used = heap() - baseline;
  if (size() !== expected) throw new Error(`${mode}: cached ${size()} of ${expected}`);
  process.stdout.write(JSON.stringify({ mode, objects: size(), bytes: used, perObject: used / size() }));
  await stop();
  await http.close();
  process.exit(0);
}

async function latencyAndThroughput(plane: ControlPlane) {
  const kubeConfig = plane.kubeConfig();
  const http = new KubeHttp(kubeConfig);
  await http.create(
    { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'latency' },
    },
  );
  await createMany(http, 'latency', 500, 'l');

  const manager = new Manager({
    kubeConfig,
    namespace: 'latency',
    logger: silentLogger,
    fieldManager: 'runtime-bench',
  });
  const latencies: number[] = [];
  let mode: 'latency' | 'write' = 'latency';
  let writes = 0;
  const controller = manager.addController({
    name: 'bench',
    for: configMaps,
    workers: 4,
    queue: { qps: 1e6, burst: 1e6 },
    reconciler: {
      async reconcile(req) {
        const cm = manager.client.get(configMaps, req);
        if (mode === 'latency') {
          const sent = Number(cm?.data?.sentAt);
          if (sent) latencies.push(performance.timeOrigin + performance.now() - sent);
        } else if (mode === 'write' && cm && cm.data?.reconciledBy !== 'bench') {
          // Like a real reconciler: write only when the object differs from the desired state.
          await manager.client.apply(configMaps, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: req.name, namespace: req.namespace },
            data: { reconciledBy: 'bench' },
          });
          writes++;
        }
      },
    },
  });
  const running = manager.start();
  await manager.cache.waitForSync();
  await new Promise((r) => setTimeout(r, 2000));

  // Latency: 500 updates, one per object, 8 writers; each carries its send time (same host clock).
  let next = 0;
  const writer = async () => {
    while (next < 500) {
      const i = next++;
      await http.patch(
        configMaps,
        { namespace: 'latency', name: `l${i}` },
        { data: { sentAt: String(Date.now()) } },
        'merge',
      );
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  await Promise.all(Array.from({ length: 8 }, writer));
  const deadline = Date.now() + 30_000;
  while (latencies.length < 500 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  latencies.sort((a, b) => a - b);

  // Throughput: enqueue every key and time until all are processed.
  mode = 'write';
  const keys500 = manager.cache.storeFor(configMaps)!.keys();
  const started = performance.now();
  for (const k of keys500) controller.queue.add(k);
  while (writes < keys500.length) await new Promise((r) => setTimeout(r, 1));
  const writeRate = keys500.length / ((performance.now() - started) / 1000);
  manager.stop();
  await running;
  await http.close();
  return { latencies, writeRate };
}

async function noopRate(plane: ControlPlane, namespace: string, count: number): Promise<number> {
  // A bare cache + controller on the 5,000 objects, reconciler does nothing: measures the runtime's own overhead.
  const http = new KubeHttp(plane.kubeConfig());
  const cache = new InformerCache({ http, namespace });
  let done = 0;
  const controller = new Controller(
    {
      name: 'noop',
      for: configMaps,
      workers: 4,
      reconciler: {
        async reconcile() {
          done++;
        },
      },
    },
    { cache },
  );
  cache.start();
  await cache.waitForSync();
  const started = performance.now();
  controller.startWorkers(); // enqueues every cached key
  while (done < count) await new Promise((r) => setImmediate(r));
  const rate = count / ((performance.now() - started) / 1000);
  await controller.shutdown();
  await cache.stop();
  await http.close();
  return rate;
}

async function main(): Promise<void> {
  const [mode, kubeconfig, namespace, expected] = process.argv.slice(2);
  if (mode === 'ours' || mode === 'client-node') {
    return measureMemory(mode, kubeconfig!, namespace!, Number(expected));
  }
  const plane = await ControlPlane.start();
  try {
    const http = new KubeHttp(plane.kubeConfig());
    await http.create(
      { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'memory' },
      },
    );
    await http.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'memory-small' },
    });
    const t0 = performance.now();
    await createMany(http, 'memory', MEMORY_OBJECTS, 'm');
    await createMany(http, 'memory-small', SMALL_OBJECTS, 'm');
    console.error(
      `created ${MEMORY_OBJECTS + SMALL_OBJECTS} objects in ${Math.round(performance.now() - t0)} ms`,
    );
    await http.close();

    // Each cache in a process of its own, at both counts: the whole heap it took over 5,000 objects (what the cache
    // costs in all, its fixed part included), and the growth from 1,000 to 5,000 objects per object (what one more
    // cached object costs: code compiled on first use, the watch connection and buffers are the same at both counts).
    const measure = (m: string, namespace: string, objects: number) => {
      const run = spawnSync(
        process.execPath,
        ['--expose-gc', self, m, plane.kubeconfigPath, namespace, String(objects)],
        { encoding: 'utf8', timeout: 120_000 },
      );
      if (run.status !== 0) throw new Error(`${m} memory run failed: ${run.stderr}`);
      return JSON.parse(run.stdout) as { perObject: number; bytes: number };
    };
    const memory: Record<string, { perObject: number; bytes: number; marginal: number }> = {};
    for (const m of ['ours', 'client-node']) {
      const large = measure(m, 'memory', MEMORY_OBJECTS);
      const small = measure(m, 'memory-small', SMALL_OBJECTS);
      memory[m] = { ...large, marginal: (large.bytes - small.bytes) / (MEMORY_OBJECTS - SMALL_OBJECTS) };
    }

    const noop = await noopRate(plane, 'memory', 5000);
    const { latencies, writeRate } = await latencyAndThroughput(plane);
    const results = {
      date: new Date().toISOString(),
      node: process.version,
      latency: {
        objects: 500,
        samples: latencies.length,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
      },
      memory: {
        objects: MEMORY_OBJECTS,
        oursBytesPerObject: memory.ours!.perObject,
        clientNodeBytesPerObject: memory['client-node']!.perObject,
        ratio: memory.ours!.perObject / memory['client-node']!.perObject,
        marginalFrom: SMALL_OBJECTS,
        oursMarginalBytesPerObject: memory.ours!.marginal,
        clientNodeMarginalBytesPerObject: memory['client-node']!.marginal,
        marginalRatio: memory.ours!.marginal / memory['client-node']!.marginal,
      },
      throughput: { noopReconcilesPerSec: noop, ssaWriteReconcilesPerSec: writeRate },
    };
    const rows: [string, string][] = [
      ['event→reconcile latency p50 (500 objects)', `${results.latency.p50Ms.toFixed(1)} ms`],
      ['event→reconcile latency p99 (500 objects)', `${results.latency.p99Ms.toFixed(1)} ms`],
      ['memory / cached object, ours (5,000)', `${Math.round(results.memory.oursBytesPerObject)} B`],
      [
        'memory / cached object, client-node makeInformer',
        `${Math.round(results.memory.clientNodeBytesPerObject)} B`,
      ],
      ['memory ratio ours / client-node', results.memory.ratio.toFixed(3)],
      [
        'memory / added object, 1,000 → 5,000, ours',
        `${Math.round(results.memory.oursMarginalBytesPerObject)} B`,
      ],
      [
        'memory / added object, 1,000 → 5,000, client-node',
        `${Math.round(results.memory.clientNodeMarginalBytesPerObject)} B`,
      ],
      ['memory ratio per added object ours / client-node', results.memory.marginalRatio.toFixed(3)],
      [
        'reconciles/s, no-op reconciler (5,000 keys, 4 workers)',
        results.throughput.noopReconcilesPerSec.toFixed(0),
      ],
      [
        'reconciles/s, one SSA write each (500 keys, 4 workers)',
        results.throughput.ssaWriteReconcilesPerSec.toFixed(0),
      ],
    ];
    const width = Math.max(...rows.map(([k]) => k.length));
    console.log(`${'metric'.padEnd(width)} | value`);
    console.log(`${'-'.repeat(width)}-|-${'-'.repeat(12)}`);
    for (const [k, v] of rows) console.log(`${k.padEnd(width)} | ${v}`);
    const dir = fileURLToPath(new URL('./results/', import.meta.url));
    await mkdir(dir, { recursive: true });
    const file = `${dir}runtime-${results.date.replaceAll(':', '-')}.json`;
    await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nwritten ${file}`);
  } finally {
    await plane.stop();
  }
}

await main();
