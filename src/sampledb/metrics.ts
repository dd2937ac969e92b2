// What the operator knows about each SampleDB and its backups, as Prometheus gauges, computed from the informer cache
// at scrape time (kube-state-metrics style: no state of its own, nothing to keep in step with the reconciler).
// The alerts of src/constructs/monitoring-rules.ts read these names; keep them stable.
import { Gauge, type LabelValues, type Registry } from 'prom-client';
import { PHASES, type SampleDbBackupObject, type SampleDbObject } from '../api/index.ts';

export const SAMPLEDB_METRICS = {
  /** 1 for the condition's current status, 0 for the other two (True, False, Unknown), per condition type. */
  condition: 'sampledb_status_condition',
  /** 1 for the current phase, 0 for the others. */
  phase: 'sampledb_status_phase',
  /** status.lastBackup.completionTime as Unix seconds; absent before the first completed backup. */
  lastBackupCompletion: 'sampledb_last_backup_completion_timestamp_seconds',
  /** 1 when spec.backup.schedule is set and not suspended. */
  backupScheduled: 'sampledb_backup_scheduled',
  /** 1 when the newest finished (Completed or Failed) SampleDBBackup of the SampleDB failed. */
  latestBackupFailed: 'sampledb_latest_backup_failed',
  /** status.replication.term: grows by one with every election, so increase() counts failovers and switchovers. */
  electionTerm: 'sampledb_replication_election_term',
  /** Per replica: bytes of WAL the primary has written that it has not received. */
  replicationLag: 'sampledb_replication_lag_bytes',
} as const;

export interface Sample {
  readonly name: (typeof SAMPLEDB_METRICS)[keyof typeof SAMPLEDB_METRICS];
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

const seconds = (timestamp: string | undefined) => {
  const ms = timestamp ? Date.parse(timestamp) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms / 1000;
};

function latestFinishedBackup(backups: readonly SampleDbBackupObject[]): SampleDbBackupObject | undefined {
  const finished = backups.filter((b) => b.status?.phase === 'Completed' || b.status?.phase === 'Failed');
  const when = (b: SampleDbBackupObject) =>
    seconds(b.status?.completedAt) ?? seconds(b.metadata.creationTimestamp) ?? 0;
  return finished.sort((a, b) => when(a) - when(b)).at(-1);
}

/** Pure: every sample for these SampleDBs and backups. */
export function sampleDbSamples(
  dbs: readonly SampleDbObject[],
  backups: readonly SampleDbBackupObject[],
): Sample[] {
  const samples: Sample[] = [];
  for (const db of dbs) {
    const id = { namespace: db.metadata.namespace ?? '', sampledb: db.metadata.name ?? '' };
    for (const condition of db.status?.conditions ?? []) {
      for (const status of CONDITION_STATUSES) {
        samples.push({
          name: SAMPLEDB_METRICS.condition,
          labels: { ...id, type: condition.type, status },
          value: condition.status === status ? 1 : 0,
        });
      }
    }
    if (db.status?.phase) {
      for (const phase of PHASES) {
        samples.push({
          name: SAMPLEDB_METRICS.phase,
          labels: { ...id, phase },
          value: db.status.phase === phase ? 1 : 0,
        });
      }
    }
    const completed = seconds(db.status?.lastBackup?.completionTime);
    if (completed !== undefined)
      samples.push({ name: SAMPLEDB_METRICS.lastBackupCompletion, labels: id, value: completed });
    const backup = db.spec.backup;
    samples.push({
      name: SAMPLEDB_METRICS.backupScheduled,
      labels: id,
      value: backup?.schedule && backup.suspend !== true ? 1 : 0,
    });
    samples.push(...replicationSamples(db, id));
    const latest = latestFinishedBackup(
      backups.filter((b) => b.metadata.namespace === id.namespace && b.spec?.sampleDB?.name === id.sampledb),
    );
    if (latest) {
      samples.push({
        name: SAMPLEDB_METRICS.latestBackupFailed,
        labels: { ...id, sampledbbackup: latest.metadata.name ?? '' },
        value: latest.status?.phase === 'Failed' ? 1 : 0,
      });
    }
  }
  return samples;
}

function replicationSamples(db: SampleDbObject, id: Record<string, string>): Sample[] {
  const replication = db.status?.replication;
  if (replication?.term === undefined) return [];
  const lag = (replication.instances ?? []).flatMap((i) =>
    i.lagBytes === undefined
      ? []
      : [{ name: SAMPLEDB_METRICS.replicationLag, labels: { ...id, pod: i.name }, value: i.lagBytes }],
  );
  return [{ name: SAMPLEDB_METRICS.electionTerm, labels: id, value: replication.term }, ...lag];
}

const HELP: Record<Sample['name'], string> = {
  sampledb_status_condition:
    'SampleDB status condition: 1 for its current status (True, False, Unknown), else 0',
  sampledb_status_phase: 'SampleDB status phase: 1 for the current phase, else 0',
  sampledb_last_backup_completion_timestamp_seconds:
    'Completion time of the last completed backup (Unix seconds)',
  sampledb_backup_scheduled: '1 when the SampleDB has a backup schedule that is not suspended',
  sampledb_latest_backup_failed: '1 when the newest finished SampleDBBackup of the SampleDB failed, else 0',
  sampledb_replication_election_term:
    'Election term of the SampleDB primary: increases by one with every failover or switchover',
  sampledb_replication_lag_bytes: 'Bytes of WAL a replica has not received from the primary',
};

const LABELS: Record<Sample['name'], string[]> = {
  sampledb_status_condition: ['namespace', 'sampledb', 'type', 'status'],
  sampledb_status_phase: ['namespace', 'sampledb', 'phase'],
  sampledb_last_backup_completion_timestamp_seconds: ['namespace', 'sampledb'],
  sampledb_backup_scheduled: ['namespace', 'sampledb'],
  sampledb_latest_backup_failed: ['namespace', 'sampledb', 'sampledbbackup'],
  sampledb_replication_election_term: ['namespace', 'sampledb'],
  sampledb_replication_lag_bytes: ['namespace', 'sampledb', 'pod'],
};

const registered = new WeakSet<Registry>();

/**
 * Registers the gauges on `registry` once; each scrape recomputes them from `read()` (the cache's current lists),
 * so deleted SampleDBs disappear from the output instead of lingering.
 */
export function registerSampleDbMetrics(
  registry: Registry,
  read: () => { dbs: readonly SampleDbObject[]; backups: readonly SampleDbBackupObject[] },
): void {
  if (registered.has(registry)) return;
  registered.add(registry);
  for (const name of Object.values(SAMPLEDB_METRICS)) {
    new Gauge({
      name,
      help: HELP[name],
      labelNames: LABELS[name],
      registers: [registry],
      collect() {
        this.reset();
        // Recomputed per gauge: a few objects per SampleDB, cheaper than keeping a cache of the cache coherent.
        const { dbs, backups } = read();
        for (const sample of sampleDbSamples(dbs, backups)) {
          if (sample.name === name) this.set(sample.labels as LabelValues<string>, sample.value);
        }
      },
    });
  }
}
