// The drills' last measurements as Prometheus gauges, computed from the cached SampleDBDrills at scrape time (as the
// SampleDB metrics are): an alert can fire on a drill that failed, or on a recovery that got slower.
import { Gauge, type LabelValues, type Registry } from 'prom-client';
import type { DrillRun, SampleDbDrillObject } from '../../api/index.ts';

export const DRILL_METRICS = {
  /** 1 when the drill's newest run succeeded, 0 when it failed or was refused. */
  lastSuccess: 'sampledb_drill_last_run_success',
  /** The newest run's measurements, in seconds (absent when the run did not measure it). */
  detectSeconds: 'sampledb_drill_last_detect_seconds',
  writableSeconds: 'sampledb_drill_last_writable_seconds',
  replicationSeconds: 'sampledb_drill_last_replication_seconds',
  restoreSeconds: 'sampledb_drill_last_restore_seconds',
  /** Runs started or refused so far. */
  runs: 'sampledb_drill_runs',
} as const;
type DrillMetric = (typeof DRILL_METRICS)[keyof typeof DRILL_METRICS];

const HELP: Record<DrillMetric, string> = {
  sampledb_drill_last_run_success: '1 when the newest run of the SampleDBDrill succeeded, else 0',
  sampledb_drill_last_detect_seconds: 'Newest drill run: seconds from the fault to the operator seeing it',
  sampledb_drill_last_writable_seconds:
    'Newest drill run: seconds from the fault to the first accepted write',
  sampledb_drill_last_replication_seconds:
    'Newest drill run: seconds from the first accepted write to every replica having replayed it',
  sampledb_drill_last_restore_seconds:
    'Newest restore-check run: seconds until the restored SampleDB was Ready',
  sampledb_drill_runs: 'Runs of the SampleDBDrill started or refused so far',
};

const FIELDS: Partial<Record<DrillMetric, keyof DrillRun>> = {
  sampledb_drill_last_detect_seconds: 'detectSeconds',
  sampledb_drill_last_writable_seconds: 'writableSeconds',
  sampledb_drill_last_replication_seconds: 'replicationSeconds',
  sampledb_drill_last_restore_seconds: 'restoreSeconds',
};

export interface DrillSample {
  name: DrillMetric;
  labels: Record<string, string>;
  value: number;
}

/** Pure: every sample for these drills. */
export function drillSamples(drills: readonly SampleDbDrillObject[]): DrillSample[] {
  return drills.flatMap((d) => {
    const labels = {
      namespace: d.metadata.namespace ?? '',
      sampledbdrill: d.metadata.name ?? '',
      sampledb: d.spec.sampleDB.name,
      kind: d.spec.kind,
    };
    const last = d.status?.runs?.[0];
    const samples: DrillSample[] = [{ name: DRILL_METRICS.runs, labels, value: d.status?.runCount ?? 0 }];
    if (!last) return samples;
    samples.push({ name: DRILL_METRICS.lastSuccess, labels, value: last.result === 'Succeeded' ? 1 : 0 });
    for (const [name, field] of Object.entries(FIELDS) as [DrillMetric, keyof DrillRun][]) {
      const value = last[field];
      if (typeof value === 'number') samples.push({ name, labels, value });
    }
    return samples;
  });
}

const registered = new WeakSet<Registry>();

export function registerDrillMetrics(registry: Registry, read: () => readonly SampleDbDrillObject[]): void {
  if (registered.has(registry)) return;
  registered.add(registry);
  for (const name of Object.values(DRILL_METRICS)) {
    new Gauge({
      name,
      help: HELP[name],
      labelNames: ['namespace', 'sampledbdrill', 'sampledb', 'kind'],
      registers: [registry],
      collect() {
        this.reset();
        for (const sample of drillSamples(read())) {
          if (sample.name === name) this.set(sample.labels as LabelValues<string>, sample.value);
        }
      },
    });
  }
}
