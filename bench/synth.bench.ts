/**
 * Synthesis benchmark (issue 16): the operator's constructs plus N typed, validated SampleDb constructs synthesized
 * to YAML, against the baseline of serializing the very same objects as plain YAML (the `yaml` package, one document
 * per object, as dist/ holds them, with cdk8s's serializer settings). Both run in this process, interleaved, several
 * rounds, timed in CPU time; the ratio of the medians is the figure (absolute times on a shared machine say little).
 *
 *   BENCH_CONSTRUCTS=1000 BENCH_ROUNDS=7 node bench/synth.bench.ts
 *
 * Prints a table and writes bench/results/synth-<timestamp>.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ApiObject, App, Chart } from 'cdk8s';
import { stringify } from 'yaml';
import { SampleDb, SampleDbCrds, SampleDbOperator } from '../src/constructs/index.ts';

const count = Number(process.env.BENCH_CONSTRUCTS ?? 1000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);

/** What a user writes for one database: a few spec fields, the rest defaulted. */
function sampleDbProps(i: number) {
  return {
    name: `db-${i}`,
    namespace: `team-${i % 10}`,
    labels: { team: `team-${i % 10}` },
    spec: {
      version: i % 2 ? '15' : '17',
      storage: { size: `${1 + (i % 20)}Gi` },
      backup: { schedule: '0 3 * * *', retention: { count: 7 } },
      deletion: { policy: 'Snapshot' as const },
    },
  };
}

/** The operator's constructs and `count` SampleDbs in one App: typed props → validation → ApiObjects. */
function appWithConstructs(): App {
  const app = new App();
  const crds = new Chart(app, 'crds');
  new SampleDbCrds(crds, 'crds');
  const operator = new Chart(app, 'operator');
  new SampleDbOperator(operator, 'operator', { image: 'localhost/sampledb-operator:bench' });
  const databases = new Chart(app, 'databases');
  for (let i = 0; i < count; i++) new SampleDb(databases, `db-${i}`, sampleDbProps(i));
  return app;
}

/** The timed constructs path: building the App and synthesizing it to YAML. */
function synthesizeConstructs(): string {
  return appWithConstructs().synthYaml();
}

/** The objects the constructs path produced, as plain JSON (taken once, outside the timed part). */
function objectsOfConstructs(): unknown[] {
  return appWithConstructs().charts.flatMap((chart) =>
    chart.node
      .findAll()
      .filter((c): c is ApiObject => c instanceof ApiObject)
      .map((o) => o.toJson()),
  );
}

/** The baseline: the same objects serialized as YAML documents with cdk8s's own settings, no constructs involved. */
function serializePlain(objects: readonly unknown[]): string {
  return objects
    .map((o) => stringify(o, { keepUndefined: true, lineWidth: 0, version: '1.1' }))
    .join('---\n');
}

/**
 * CPU milliseconds (user + system) of this process while fn runs: synthesis is single-threaded CPU work, and on a
 * shared machine wall time mostly measures the other tenants.
 */
function timed(fn: () => unknown): number {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const objects = objectsOfConstructs();
// One warm-up of each, so neither side pays for module loading or JIT alone.
synthesizeConstructs();
serializePlain(objects);
const constructsMs: number[] = [];
const plainMs: number[] = [];
for (let r = 0; r < rounds; r++) {
  constructsMs.push(timed(synthesizeConstructs));
  plainMs.push(timed(() => serializePlain(objects)));
}
const result = {
  constructs: count,
  objects: objects.length,
  rounds,
  constructsMedianMs: median(constructsMs),
  plainYamlMedianMs: median(plainMs),
  ratio: median(constructsMs) / median(plainMs),
  constructsMs,
  plainMs,
};
console.log(
  `synthesis of the operator + ${count} SampleDb constructs (${objects.length} objects), ${rounds} rounds`,
);
console.log('| | median | baseline | ratio | goal |');
console.log('| --- | --- | --- | --- | --- |');
console.log(
  `| constructs → YAML (CPU) | ${result.constructsMedianMs.toFixed(0)} ms | plain YAML of the same objects ` +
    `${result.plainYamlMedianMs.toFixed(0)} ms | ${result.ratio.toFixed(2)}× | ≤ 2× |`,
);
const dir = fileURLToPath(new URL('./results/', import.meta.url));
await mkdir(dir, { recursive: true });
const file = `${dir}synth-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${file}`);
