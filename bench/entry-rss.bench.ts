/**
 * The operator's resident memory by entry point, side by side on one kwok-tier control plane (no timed assertion):
 * each entry (BENCH_ENTRIES, default `lib/main.js,lib/operator.js`: the tsc output and the bundle the image runs,
 * ADR 0011) is started at once, each watching a namespace of its own, and read from /proc:
 *  - idle: caches synced, nothing to do (median of five readings);
 *  - loaded: N SampleDBs (BENCH_SAMPLEDBS, default 40) created in each namespace, every StatefulSet there, then
 *    BENCH_SETTLE_SECONDS (default 60) for the work to end (median of five readings), and the CPU seconds used
 *    from the idle reading to the last loaded one.
 * BENCH_SAMPLEDBS may list rising counts (e.g. `40,120`): each namespace is brought to each count in turn (the
 * SampleDBs of the last count kept, only the difference created), with its own settle and reading, and the growth
 * per SampleDB between two consecutive counts is reported as a slope. The growth from idle to the first count also
 * holds one-time costs (code compiled and caches sized on first use), so it is not a per-object figure; the slope
 * between two loaded counts leaves those out.
 * The first entry is the baseline; every other is reported as a ratio of it. Needs `npm run build` first.
 * Prints a table and writes bench/results/entry-rss-<timestamp>.json.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { API_VERSION } from '../src/api/index.ts';
import { ControlPlane, pollUntil } from '../src/envtest/index.ts';
import { InformerCache, KubeHttp, STATEFUL_SETS } from '../src/runtime/index.ts';
import { SAMPLEDBS } from '../src/sampledb/resources.ts';
import { BenchOperator } from './lib/operator-process.ts';
import { createNamespace, installCrds } from './lib/plane.ts';

// `entry` or `entry@flag@flag`: node flags before the script (e.g. lib/operator.js@--max-semi-space-size=2).
const entries = (process.env.BENCH_ENTRIES ?? 'lib/main.js,lib/operator.js').split(',').filter(Boolean);
const scriptOf = (entry: string) => entry.split('@')[0] ?? entry;
const flagsOf = (entry: string) => entry.split('@').slice(1);
const counts = (process.env.BENCH_SAMPLEDBS ?? '40').split(',').map(Number);
if (counts.some((c, i) => !Number.isInteger(c) || c <= (counts[i - 1] ?? 0)))
  throw new Error(`BENCH_SAMPLEDBS must be rising positive integers, not ${process.env.BENCH_SAMPLEDBS}`);
const settleMs = Number(process.env.BENCH_SETTLE_SECONDS ?? 60) * 1000;
const timeout = { timeoutMs: 300_000, intervalMs: 250 };
const root = new URL('..', import.meta.url);

async function median(sample: () => Promise<number>, n = 5): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    values.push(await sample());
    await new Promise((r) => setTimeout(r, 1000));
  }
  return values.sort((a, b) => a - b)[Math.floor(n / 2)] ?? 0;
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

async function main(): Promise<void> {
  for (const entry of entries)
    if (!existsSync(fileURLToPath(new URL(scriptOf(entry), root))))
      throw new Error(`${entry} is missing: run npm run build first`);
  console.error(`entry RSS bench: ${entries.join(' vs ')}, N=${counts.join(' then ')} SampleDBs each`);
  const plane = await ControlPlane.start({ workloads: true });
  const http = new KubeHttp(plane.kubeConfig());
  const operators: BenchOperator[] = [];
  try {
    await installCrds(plane);
    const namespaces = entries.map((_, i) => `rss-${i}`);
    for (const name of namespaces) await createNamespace(http, name);
    const cache = new InformerCache({ http, namespaces });
    cache.informerFor(STATEFUL_SETS);
    cache.start();
    await cache.waitForSync();

    for (const [i, entry] of entries.entries())
      operators.push(
        await BenchOperator.start(
          plane.kubeconfigPath,
          [namespaces[i] ?? ''],
          scriptOf(entry),
          flagsOf(entry),
        ),
      );
    const idle = await Promise.all(operators.map((o) => median(() => o.rssBytes())));
    const cpuBefore = await Promise.all(operators.map((o) => o.cpuSeconds()));

    // loaded[k][i]: RSS of operator i once every namespace holds counts[k] SampleDBs.
    const loaded: number[][] = [];
    let created = 0;
    for (const count of counts) {
      for (const namespace of namespaces)
        for (let n = created; n < count; n++)
          await http.create(SAMPLEDBS, {
            apiVersion: API_VERSION,
            kind: 'SampleDB',
            metadata: { name: `db-${n}`, namespace },
            spec: { version: '17', storage: { size: '1Gi' } },
          });
      created = count;
      await pollUntil(
        `every StatefulSet in every namespace (${count} each)`,
        async () => {
          const sts = cache.storeFor(STATEFUL_SETS)?.list() ?? [];
          return namespaces.every((ns) => sts.filter((s) => s.metadata.namespace === ns).length >= count)
            ? true
            : undefined;
        },
        timeout,
      );
      await new Promise((r) => setTimeout(r, settleMs));
      loaded.push(await Promise.all(operators.map((o) => median(() => o.rssBytes()))));
    }
    const cpu = await Promise.all(
      operators.map(async (o, i) => (await o.cpuSeconds()) - (cpuBefore[i] ?? 0)),
    );
    await cache.stop();

    // With one count the columns are the ones this bench always printed; with several, the loaded ones are
    // suffixed with their count and a slope column follows for each pair of consecutive counts.
    const suffix = (k: number) => (counts.length > 1 ? `@${counts[k]}` : '');
    const rows = entries.map((entry, i) => {
      const at = (k: number) => loaded[k]?.[i] ?? 0;
      const row: Record<string, string | number> = {
        entry,
        idleMB: mb(idle[i] ?? 0),
        idleRatio: Math.round(((idle[i] ?? 0) / (idle[0] ?? 1)) * 100) / 100,
      };
      for (const k of counts.keys()) {
        row[`loadedMB${suffix(k)}`] = mb(at(k));
        row[`loadedRatio${suffix(k)}`] = Math.round((at(k) / (loaded[k]?.[0] ?? 1)) * 100) / 100;
      }
      row.perSampleDbKB = Math.round((at(0) - (idle[i] ?? 0)) / (counts[0] ?? 1) / 1024);
      for (const k of counts.keys())
        if (k > 0)
          row[`slopeKB@${counts[k - 1]}-${counts[k]}`] = Math.round(
            (at(k) - at(k - 1)) / ((counts[k] ?? 0) - (counts[k - 1] ?? 0)) / 1024,
          );
      row.cpuSeconds = Math.round((cpu[i] ?? 0) * 100) / 100;
      return row;
    });
    console.table(rows);
    const results = new URL('results/', import.meta.url);
    await mkdir(results, { recursive: true });
    const file = new URL(`entry-rss-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, results);
    await writeFile(file, `${JSON.stringify({ counts, settleMs, rows }, null, 2)}\n`);
    console.error(`written ${fileURLToPath(file)}`);
  } finally {
    await Promise.all(operators.map((o) => o.stop()));
    http.close();
    await plane.stop();
  }
}

await main();
