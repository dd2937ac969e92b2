// The alerts of SampleDbPrometheusRule, as a pure function so promtool tests, the docs and the construct share
// them. Metric names are the ones the operator (src/runtime/metrics.ts, src/sampledb/metrics.ts), postgres_exporter
// and the kubelet export; test/unit/constructs/monitoring.test.ts checks the operator's against its registry.
import type { AlertingRule, RuleGroup } from './monitoring-types.ts';

export interface SampleDbAlertOptions {
  /** `job` label of the operator's metrics (a ServiceMonitor names it after the Service). Default: `sampledb-operator-metrics`. */
  readonly operatorJob?: string;
  /** Alert when a data volume is predicted to be full within this many hours. Default: 24. */
  readonly storageFullWithinHours?: number;
  /** Alert when the last completed backup of a scheduled SampleDB is older than this. Default: 26 (daily + 2 h). */
  readonly backupMaxAgeHours?: number;
  /** Alert when a replica lags by more than this. Default: 300. */
  readonly replicationLagSeconds?: number;
  /**
   * Where the runbooks are: each alert's `runbook_url` is this plus `#<alert name in lower case>`. Default:
   * `docs/runbooks.md` (this repository's file; point it at where you publish the docs).
   */
  readonly runbookBaseUrl?: string;
}

export const ALERT_DEFAULTS = {
  operatorJob: 'sampledb-operator-metrics',
  storageFullWithinHours: 24,
  backupMaxAgeHours: 26,
  replicationLagSeconds: 300,
  runbookBaseUrl: 'docs/runbooks.md',
} as const;

type Severity = 'critical' | 'warning';

// Several operator replicas each serve the cache-derived gauges: `max by` folds them into one series per SampleDB.
const byDb = 'namespace, sampledb';
// Every instance's data claim (data-<name>-<ordinal>): a replica's volume fills up as the primary's does.
const DATA_PVC = 'persistentvolumeclaim=~"data-.+-[0-9]+"';
/** Joins a PVC series to the SampleDB that owns it, and keeps only PVCs of SampleDBs the operator knows. */
const ofSampleDb = (expr: string) =>
  `label_replace(${expr}, "sampledb", "$1", "persistentvolumeclaim", "data-(.+)-[0-9]+") and on (${byDb}) max by (${byDb}) (sampledb_status_phase)`;

export function sampleDbAlertGroups(options: SampleDbAlertOptions = {}): RuleGroup[] {
  const o = { ...ALERT_DEFAULTS, ...options };
  const operator = `job="${o.operatorJob}"`;
  const alert = (
    name: string,
    severity: Severity,
    expr: string,
    forDuration: string,
    summary: string,
    description: string,
  ): AlertingRule => ({
    alert: name,
    expr,
    ...(forDuration === '0m' ? {} : { for: forDuration }),
    labels: { severity },
    annotations: { summary, description, runbook_url: `${o.runbookBaseUrl}#${name.toLowerCase()}` },
  });
  return [
    {
      name: 'sampledb.database',
      rules: [
        alert(
          'SampleDBNotReady',
          'warning',
          `max by (${byDb}) (sampledb_status_condition{type="Ready",status="True"}) == 0 unless on (${byDb}) max by (${byDb}) (sampledb_status_phase{phase="Deleting"}) == 1`,
          '15m',
          'SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} is not Ready',
          'The Ready condition of SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} has not been True for 15 minutes.',
        ),
        alert(
          'SampleDBNoPrimary',
          'critical',
          `count by (${byDb}) (pg_up) unless on (${byDb}) count by (${byDb}) (pg_up == 1 and on (namespace, pod) pg_settings_in_hot_standby == 0)`,
          '5m',
          'SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} has no primary accepting writes',
          'The exporter of SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} answers, but no instance is up and out of recovery.',
        ),
        alert(
          'SampleDBExporterDown',
          'warning',
          'up{container="exporter", sampledb!=""} == 0',
          '10m',
          'The exporter of SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} cannot be scraped',
          'Prometheus has failed to scrape {{ $labels.pod }} for 10 minutes: the database metrics (and SampleDBNoPrimary) are blind.',
        ),
        alert(
          'SampleDBReplicationLag',
          'warning',
          `max by (${byDb}, pod) (pg_replication_lag_seconds) > ${o.replicationLagSeconds}`,
          '10m',
          'SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }}: {{ $labels.pod }} lags {{ $value | humanizeDuration }}',
          `A replica of SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} has replayed nothing new for more than ${o.replicationLagSeconds} s.`,
        ),
        alert(
          'SampleDBStorageFillingUp',
          'warning',
          ofSampleDb(
            `(kubelet_volume_stats_available_bytes{${DATA_PVC}} / kubelet_volume_stats_capacity_bytes{${DATA_PVC}} < 0.5 and predict_linear(kubelet_volume_stats_available_bytes{${DATA_PVC}}[6h], ${o.storageFullWithinHours} * 3600) < 0)`,
          ),
          '15m',
          'SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }}: data volume predicted full within ' +
            `${o.storageFullWithinHours} hours`,
          `At the rate of the last 6 hours, {{ $labels.persistentvolumeclaim }} runs out of space within ${o.storageFullWithinHours} hours.`,
        ),
        alert(
          'SampleDBStorageAlmostFull',
          'critical',
          ofSampleDb(
            `(kubelet_volume_stats_available_bytes{${DATA_PVC}} / kubelet_volume_stats_capacity_bytes{${DATA_PVC}} < 0.05)`,
          ),
          '5m',
          'SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }}: data volume less than 5% free',
          '{{ $labels.persistentvolumeclaim }} has less than 5% of its space left; PostgreSQL stops when it is full.',
        ),
      ],
    },
    {
      name: 'sampledb.backups',
      rules: [
        alert(
          'SampleDBBackupFailed',
          'warning',
          'max by (namespace, sampledb, sampledbbackup) (sampledb_latest_backup_failed) == 1',
          '1m',
          'The latest backup of SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} failed',
          'SampleDBBackup {{ $labels.sampledbbackup }} failed and no backup has completed since.',
        ),
        alert(
          'SampleDBBackupStale',
          'warning',
          `max by (${byDb}) (sampledb_backup_scheduled) == 1 and on (${byDb}) (time() - max by (${byDb}) (sampledb_last_backup_completion_timestamp_seconds)) > ${o.backupMaxAgeHours} * 3600`,
          '15m',
          'SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }}: last backup older than ' +
            `${o.backupMaxAgeHours} hours`,
          `The backup schedule of SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} has not completed a backup in ${o.backupMaxAgeHours} hours.`,
        ),
        alert(
          'SampleDBBackupMissing',
          'warning',
          `max by (${byDb}) (sampledb_backup_scheduled) == 1 unless on (${byDb}) max by (${byDb}) (sampledb_last_backup_completion_timestamp_seconds)`,
          `${o.backupMaxAgeHours}h`,
          'SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} has never completed a backup',
          `SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} has had a backup schedule for ${o.backupMaxAgeHours} hours without one completed backup.`,
        ),
        alert(
          'SampleDBBackupVerificationFailed',
          'warning',
          `max by (${byDb}) (sampledb_status_condition{type="BackupHealthy",status="False"}) == 1`,
          '1m',
          'A backup of SampleDB {{ $labels.namespace }}/{{ $labels.sampledb }} failed verification',
          'The BackupHealthy condition is False: a backup failed verification (spec.backup.verify), the latest scheduled backup failed, or none completed within twice the schedule interval; its reason says which.',
        ),
      ],
    },
    {
      name: 'sampledb.operator',
      rules: [
        alert(
          'SampleDBOperatorDown',
          'critical',
          `absent(up{${operator}} == 1)`,
          '10m',
          'No SampleDB operator replica can be scraped',
          `No target of job ${o.operatorJob} has been up for 10 minutes: SampleDBs are not being reconciled.`,
        ),
        alert(
          'SampleDBOperatorNoLeader',
          'critical',
          `max(leader_election_master_status{${operator}}) == 0`,
          '5m',
          'No SampleDB operator replica holds the leader lease',
          'Operator replicas run, but none has been the leader for 5 minutes: nothing reconciles.',
        ),
        alert(
          'SampleDBOperatorReconcileErrors',
          'warning',
          `sum by (namespace, controller) (rate(controller_runtime_reconcile_errors_total{${operator}}[5m])) > 0`,
          '15m',
          'The {{ $labels.controller }} controller keeps failing to reconcile',
          'Controller {{ $labels.controller }} has returned errors for 15 minutes ({{ $value | humanize }} per second).',
        ),
        alert(
          'SampleDBOperatorWatchStalled',
          'warning',
          `sum by (namespace, pod, resource) (increase(runtime_watch_restarts_total{${operator}, reason="stall"}[30m])) >= 2`,
          '0m',
          'Watches of {{ $labels.resource }} keep stalling',
          'The operator restarted its silent watch of {{ $labels.resource }} at least twice in 30 minutes: events arrive late.',
        ),
      ],
    },
  ];
}

/** Every alert name, in order. */
export const sampleDbAlertNames = (options?: SampleDbAlertOptions): string[] =>
  sampleDbAlertGroups(options).flatMap((g) => g.rules.map((r) => r.alert));
